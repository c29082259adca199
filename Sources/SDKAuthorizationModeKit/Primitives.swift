// The rules and the lock the core follows too (header fields, host names, text safe for a log,
// redaction, `Locked`), for a mode to follow the same way: re-exported, so a mode author's one
// `import SDKAuthorizationModeKit` brings them. The core imports them internally: none of them is in
// its API.
@_exported import SDKAuthorizationPrimitives
