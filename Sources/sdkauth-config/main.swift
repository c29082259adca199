import Foundation
import SDKAuthorizationDoctor

// The authorization doctor: checks configuration files the way the framework reads them and a client
// starts from them, and decodes JWTs. The logic is in SDKAuthorizationDoctor; this file only runs it.
// Used by the `authorization-doctor` and `validate-authorization-config` command plugins:
//   swift package authorization-doctor [FILE ...] [--jwt TOKEN]

let report = Doctor.run(
    Array(CommandLine.arguments.dropFirst()),
    now: Date(),
    currentDirectory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true),
    readStandardInput: { Doctor.readToken(from: .standardInput) }
)
for finding in report.findings {
    let handle: FileHandle = finding.severity == .note ? .standardOutput : .standardError
    handle.write(Data((finding.description + "\n").utf8))
}
exit(report.exitStatus)
