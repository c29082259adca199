// libFuzzer entry point: every parser that reads untrusted text must answer with a value or a
// typed error, never trap. Built and run by Scripts/fuzz-parsers together with the framework's
// sources as one module.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParsers(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    let text = String(decoding: data, as: UTF8.self)
    _ = try? JWTClaims(decoding: text)
    _ = try? ProjectAuthorization(parsing: text)
    _ = try? AuthorizedDomain(text)
    _ = try? AuthorizationConfiguration(data: data, format: .json)
    _ = try? AuthorizationConfiguration(data: data, format: .propertyList)
    if let claims = try? JWTClaims(decoding: text) {
        _ = claims.expires(within: 60, of: Date())
    }
    return 0
}
