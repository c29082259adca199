import Foundation
import Testing
import TestSupport
@testable import SDKAuthorization

extension CredentialNamespace {
    /// The namespace the tests' stores belong to.
    static let testing = try! CredentialNamespace("com.example.tests")
}
