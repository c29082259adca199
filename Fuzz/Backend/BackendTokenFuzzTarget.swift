// libFuzzer entry point for the reference backend's bearer-token pre-checks: the steps KeyRing.verify
// takes before any signature is checked (size limit, three segments, base64url, JSON header and
// payload read with the depth limit). Built by Scripts/fuzz together with the backend's
// dependency-free Samples/Sources/ReferenceBackend/JSONValue.swift; the 8192 and 32 below are
// ReferenceBackend.maximumAuthorizationHeaderSize and maximumTokenJSONDepth, which live beside
// Hummingbird code that this build does not compile.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBackendToken(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let token = String(decoding: Data(bytes: start, count: count), as: UTF8.self)
    guard token.utf8.count <= 8_192 else { return 0 }
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3 else { return 0 }
    for part in parts.prefix(2) {
        guard let data = Base64URL.decode(part) else { continue }
        _ = JSONValue.object(from: data, maximumDepth: 32)
        _ = try? JSONValue.parse(data, maximumDepth: 32)
    }
    // The body check of bearer endpoints reads request bodies the same way.
    _ = JSONValue.object(from: Data(bytes: start, count: count), maximumDepth: 64)
    return 0
}
