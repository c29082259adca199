import Foundation
import SDKAuthorization
import SDKAuthorizationModeKit
import SDKAuthorizationEngagement

/// One line of a sample's report: which mode sent what where, and what the server said.
public struct ReportRow: Sendable {
    public let mode: String
    public let endpoint: String
    /// The `Authorization` header as sent, credential redacted: `Bearer eyJhbG…(612 chars)`.
    public let header: String
    /// What the server answered, e.g. `200 accepted` or `401 token_expired`.
    public let verdict: String
    /// Whether the outcome is the one the sample expects (a rejection can be expected).
    public let asExpected: Bool

    public init(mode: String, endpoint: String, header: String, verdict: String, asExpected: Bool) {
        self.mode = mode
        self.endpoint = endpoint
        self.header = header
        self.verdict = verdict
        self.asExpected = asExpected
    }
}

/// Turns an `Authorization` header value into its redacted form.
public func redactedHeader(_ value: String?) -> String {
    guard let value else { return "(none)" }
    let parts = value.split(separator: " ", maxSplits: 1)
    guard parts.count == 2 else { return Redaction.redact(value) }
    return "\(parts[0]) \(Redaction.redact(String(parts[1])))"
}

/// The error code of the backend's JSON error body, e.g. `token_expired`.
public func serverErrorCode(_ body: Data) -> String {
    struct ErrorBody: Decodable { let error: String? }
    return (try? JSONDecoder().decode(ErrorBody.self, from: body))?.error ?? String(decoding: body.prefix(80), as: UTF8.self)
}

/// The verdict text for a request's outcome.
public func verdict(_ outcome: Result<ServerResponse, RequestError>) -> String {
    switch outcome {
    case .success(let response):
        return "\(response.statusCode) accepted"
    case .failure(let error):
        if let status = error.statusCode { return "\(status) \(serverErrorCode(error.body))" }
        if error.code == .missingCustomerToken || error.code == .emptyCredential { return "not sent: provider gave no token" }
        return "\(error.wasSent ? "failed" : "not sent"): \(error)"
    }
}

/// Prints rows as an aligned table.
public func printReport(_ rows: [ReportRow], to output: (String) -> Void = { print($0) }) {
    let headers = ["mode", "endpoint", "Authorization sent", "server verdict", ""]
    let cells = rows.map { [$0.mode, $0.endpoint, $0.header, $0.verdict, $0.asExpected ? "ok" : "UNEXPECTED"] }
    let widths = headers.indices.map { column in ([headers] + cells).map { $0[column].count }.max() ?? 0 }
    func line(_ values: [String]) -> String {
        zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
    }
    output(line(headers))
    output(line(widths.map { String(repeating: "-", count: $0) }))
    cells.forEach { output(line($0)) }
}
