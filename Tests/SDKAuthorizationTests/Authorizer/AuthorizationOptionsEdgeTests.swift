import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization

/// The authorizer's options at the edges of their ranges: the last value in is accepted, the first
/// out is refused naming its key.
@Suite("Authorization options at the edges of their ranges", .hangLimit)
struct AuthorizationOptionsEdgeTests {
    func make(_ options: AuthorizationOptions) throws(ConfigurationError) -> RequestAuthorizer {
        try RequestAuthorizer(policy: AuthorizationPolicy(), providers: [:], options: options)
    }

    @Test(arguments: [
        AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1)), AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1_000)),
        AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(interval: 86_400)), AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(interval: 0.001)),
        AuthorizationOptions(redirectLimit: 0), AuthorizationOptions(redirectLimit: 20),
        AuthorizationOptions(requestDeadline: 86_400), AuthorizationOptions(requestDeadline: 0.001),
    ])
    func theLastValueInEachRangeIsAccepted(options: AuthorizationOptions) throws {
        _ = try make(options)
    }

    @Test(arguments: [
        (AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 0)), "refreshWindow.maximumRefreshes"),
        (AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(maximumRefreshes: 1_001)), "refreshWindow.maximumRefreshes"),
        (AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(interval: 86_400.001)), "refreshWindow.interval"),
        (AuthorizationOptions(refreshWindow: AuthorizationOptions.RefreshWindow(interval: 0)), "refreshWindow.interval"),
        (AuthorizationOptions(redirectLimit: -1), "redirectLimit"), (AuthorizationOptions(redirectLimit: 21), "redirectLimit"),
        (AuthorizationOptions(requestDeadline: 86_400.001), "requestDeadline"), (AuthorizationOptions(requestDeadline: 0), "requestDeadline"),
    ])
    func theFirstValueOutOfEachRangeIsRefusedNamingItsKey(options: AuthorizationOptions, key: String) {
        #expect {
            try make(options)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.code == .invalidValue && error.key == key
        }
    }
}
