import Foundation
import SDKAuthorization

// MARK: - Engagement (Exponea) mode

extension RequestError.Code {
    /// The app's `AuthorizationProviderType` returned `nil` or an empty string: the Exponea SDKs'
    /// "no customer token" case. Not sent. (A provider whose credential is blank fails with the
    /// core's `RequestError.Code.emptyCredential`.)
    public static let missingCustomerToken = RequestError.Code(rawValue: "missingCustomerToken")
}

extension RequestError {
    /// The app's `AuthorizationProviderType` returned no token.
    public static func missingCustomerToken(endpoint: Endpoint.ID?) -> RequestError {
        RequestError(.missingCustomerToken, "The authorization provider returned no token for \(endpoint.map { "\($0)" } ?? RequestError.requestPlaceholder); the request was not sent",
                     endpoint: endpoint)
    }
}
