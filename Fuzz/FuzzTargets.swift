// libFuzzer entry point for the framework's untrusted-input code. Built with the framework's
// sources as one module by Scripts/fuzz, which runs each target in turn; the target comes from
// the environment variable SDKAUTH_FUZZ_TARGET:
//   jwt        the bounded JSON reader and JWT claims
//   config     configuration files, JSON and property lists
//   names      authorization strings, domain patterns, rules, endpoint templates, provider and type
//              names, URL sanitizing, log escaping
//   headers    header-field rules, checked against plain reference implementations
//   redirects  Location handling: credentials never cross an origin or leave their path scope, no body leaves the origin
// Every input must end in a value or a typed error: a trap, a failed invariant (preconditionFailure)
// or a slow input is a finding.
import Foundation

nonisolated(unsafe) private var selectedTarget = "parsers"

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> CInt {
    selectedTarget = ProcessInfo.processInfo.environment["SDKAUTH_FUZZ_TARGET"] ?? "parsers"
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    switch selectedTarget {
    case "jwt": fuzzJWT(data)
    case "config": fuzzConfiguration(data)
    case "names": fuzzNames(data)
    case "headers": fuzzHeaders(data)
    case "redirects": fuzzRedirects(data)
    case "signature": fuzzSignature(data)
    default: preconditionFailure("unknown SDKAUTH_FUZZ_TARGET \(selectedTarget)")
    }
    return 0
}

/// The JSON reader and the JWT claims reader.
func fuzzJWT(_ data: Data) {
    _ = try? BoundedJSONReader.parse(data)
    let text = String(decoding: data, as: UTF8.self)
    if let claims = try? JWTClaims(decoding: text) {
        _ = claims.expires(within: 60, of: Date())
    }
}

/// Configuration files, JSON and property list.
func fuzzConfiguration(_ data: Data) {
    _ = try? AuthorizationConfiguration(data: data, format: .json)
    _ = try? AuthorizationConfiguration(data: data, format: .propertyList)
    // With modes registered: their keys, vendor spellings and Braze's nested dictionary.
    _ = try? AuthorizationConfiguration(data: data, format: .json, registry: fuzzRegistry)
    _ = try? AuthorizationConfiguration(data: data, format: .propertyList, registry: fuzzRegistry)
}

/// A registry holding the signature and token-exchange modes.
let fuzzRegistry: ProviderRegistry = {
    let registry = ProviderRegistry()
    registry.register(SignatureMode())
    registry.register(TokenExchangeMode(signer: .async { _ in throw CancellationError() }))
    return registry
}()

/// Everything that reads a name or a pattern: authorization strings, domain patterns and origins, rules,
/// endpoint templates, provider and type names, URL sanitizing, log escaping.
func fuzzNames(_ data: Data) {
    let text = String(decoding: data, as: UTF8.self)
    _ = try? ProjectAuthorization(parsing: text)
    // A domain's description is a pattern for the same domain; http only ever on a loopback host;
    // the domain of a URL's origin matches that URL.
    if let domain = try? AuthorizedDomain(text) {
        precondition((try? AuthorizedDomain(domain.description)) == domain, "a domain's description does not parse back to it")
        if let url = URL(string: text), url.scheme?.lowercased() == "http", domain.matches(url) {
            precondition(HostName.host(of: url).map(HostName.isLoopback) == true, "an http domain matched a host that is not loopback")
        }
    }
    if let url = URL(string: text) {
        if let domain = try? AuthorizedDomain(origin: url) {
            precondition(domain.matches(url), "a domain made from a URL does not match it")
            precondition((try? AuthorizedDomain(domain.description)) == domain, "an origin's description does not parse back to it")
        }
    }
    _ = try? AuthorizationRule(host: text, path: "/" + text, method: text, scheme: .bearer)
    if (try? AuthorizationConfiguration.checkProviderName(text)) != nil {
        _ = SwiftTypeLookup.type(named: text)
    }
    // A URL's password never survives sanitizing.
    let secret = "pw-\(data.count)-SECRET"
    precondition(!ConfigurationError.sanitizedURLText("https://user:\(secret)@\(text)").contains(secret), "sanitizedURLText kept a password")
    let endpoint = Endpoint("fuzz", method: "GET", path: text)
    if endpoint.templateProblem == nil {
        let parameters = Dictionary(endpoint.parameterNames.map { ($0, text) }, uniquingKeysWith: { first, _ in first })
        _ = try? endpoint.url(baseURL: URL(string: "https://api.example.com/base"), parameters: parameters)
    }
    precondition(!LogText.escaped(text).contains("\n"), "an escaped log value holds a line break")
}

/// Header rules against one-line reference implementations of RFC 9110 and RFC 6750.
func fuzzHeaders(_ data: Data) {
    let text = String(decoding: data, as: UTF8.self)
    let bytes = Array(text.utf8)
    let visible = bytes.allSatisfy { (0x21...0x7E).contains($0) || $0 == 0x20 }
    let blank = bytes.allSatisfy { $0 == 0x20 }

    let credential = HeaderFieldRules.check(text)
    precondition(credential == (!visible ? .forbiddenCharacters : blank ? .empty : .valid), "check disagrees with the reference")

    let b64 = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/".utf8)
    let body = bytes.prefix { b64.contains($0) }
    let padding = bytes.dropFirst(body.count)
    let isB64Token = !body.isEmpty && padding.allSatisfy { $0 == UInt8(ascii: "=") }
    let bearer = HeaderFieldRules.checkBearer(text)
    precondition(bearer == (!visible ? .forbiddenCharacters : blank ? .empty : isB64Token ? .valid : .forbiddenCharacters), "checkBearer disagrees with the reference")

    let token = Set("!#$%&'*+-.^_`|~abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
    precondition(HeaderFieldRules.isValidName(text) == (!bytes.isEmpty && bytes.allSatisfy { token.contains($0) }), "isValidName disagrees")
    precondition(HeaderFieldRules.isValidValue(text) == bytes.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x09 }, "isValidValue disagrees")

    // A credential that passes may go into a header: no CR, LF, NUL or non-ASCII reaches the wire.
    for candidate in [Credential.bearer(text), .authorization(scheme: "Token", text), .header(text, value: text)] where candidate.verdict == .valid {
        precondition(candidate.headerValue?.utf8.contains { $0 < 0x20 || $0 > 0x7E } == false, "an unsendable credential passed")
    }
}

/// The first byte picks the status and the method; the rest is the `Location`. The invariants
/// are the redirect rules every stack relies on.
func fuzzRedirects(_ data: Data) {
    guard let first = data.first else { return }
    let statuses = [301, 302, 303, 307, 308, 300, 304]
    let status = statuses[Int(first & 0x7F) % statuses.count]
    let location = String(decoding: data.dropFirst(), as: UTF8.self)
    let post = first & 0x80 == 0
    let original = OutgoingRequest(
        method: post ? "POST" : "GET",
        url: URL(string: "https://api.example.com/v1/items?x=1")!,
        headers: ["Authorization": "Bearer token", "X-Signature": "sig", "Cookie": "c=1", "Accept": "*/*"],
        body: post ? Data("{}".utf8) : nil
    )
    // The credential is scoped to `/v1/**`: a hop within the origin carries it only where the
    // policy would send it directly.
    guard let rule = try? AuthorizationRule(host: "api.example.com", path: "/v1/**", scheme: .bearer),
          let authorizer = try? RequestAuthorizer(policy: AuthorizationPolicy(rules: [rule]), providers: [.bearer: NoProvider()], diagnostics: SilentSink())
    else { return }
    let issued = IssuedCredential(provider: NoProvider(), credential: .header("X-Signature", value: "sig"), context: AuthorizationContext(request: original),
                                  inspectsAcceptedResponses: false)
    let authorized = AuthorizedRequest(request: original, original: original, endpoint: nil, scheme: .bearer, attempt: 1, deadline: nil,
                                       carriesCredential: true, issued: issued)
    do {
        guard let next = try authorizer.redirect(authorized, after: ServerResponse(statusCode: status, headers: ["Location": location])) else { return }
        let scheme = next.request.url.scheme?.lowercased()
        precondition(scheme == "http" || scheme == "https", "followed a redirect to another scheme")
        if !Origin.same(next.request.url, original.url) {
            precondition(!next.carriesCredential, "still counted as carrying its credential on another origin")
            for name in ["authorization", "x-signature", "cookie"] {
                precondition(next.request.value(forHeader: name) == nil, "\(name) crossed an origin")
            }
            precondition(next.request.body == nil, "a body crossed an origin")
        } else {
            let inScope = rule.matches(next.request) && !RequestPath(next.request.url.percentEncodedPathForMatching).isAmbiguous
            precondition((next.request.value(forHeader: "X-Signature") == "sig") == inScope, "a same-origin hop's credential does not follow the policy")
            precondition(next.carriesCredential == inScope && next.needsNewCredential == false, "a same-origin hop's credential state does not follow the policy")
        }
    } catch {
        precondition(error.code == .redirectRefused || error.code == .tooManyRedirects || error.code == .ambiguousPath, "unexpected error \(error.code)")
    }
}

private struct SilentSink: DiagnosticsSink {
    func record(_ diagnostic: Diagnostic) {}
}

private struct NoProvider: AuthorizationProvider {
    func credential(for context: AuthorizationContext) async throws -> Credential { .omitted }
}

/// The signature mode's untrusted input: the request queue's journal file (read at every start, and
/// perhaps damaged) and the server's `auth_error` bodies.
func fuzzSignature(_ data: Data) {
    _ = SignatureFailure.reported(in: data, signature: nil, requestUser: nil)
    var bytes = [UInt8](data)
    if !bytes.starts(with: JournalCodec.header) { bytes = JournalCodec.header + bytes }
    let decoded = JournalCodec.decode(bytes)
    precondition(decoded.validLength <= bytes.count && decoded.records.count == decoded.sizes.count, "decode overran its input")
    // The records read and the whole records skipped (unreadable, each by its own length) cover
    // exactly what was read, in order, without overlap.
    precondition(decoded.sizes.reduce(JournalCodec.header.count, +) + decoded.skipped.reduce(0) { $0 + $1.length } == decoded.validLength,
                 "record sizes do not add up")
    var end = JournalCodec.header.count
    for record in decoded.skipped {
        precondition(record.offset >= end && record.length > 0 && record.offset + record.length <= decoded.validLength, "a skipped record overlaps or overruns")
        end = record.offset + record.length
    }
    // What was read encodes to records that read back the same.
    let again = decoded.records.reduce(JournalCodec.header) { $0 + JournalCodec.encode($1) }
    precondition(JournalCodec.decode(again).records == decoded.records, "a decoded record does not survive a round trip")
}
