import Dispatch
import Foundation

/// Wraps a synchronous ``AuthorizationProviderType`` so the client can await it.
///
/// The wrapped provider is created and called only on a dedicated serial dispatch queue, never on
/// Swift's cooperative thread pool: a provider that blocks for a while holds up the requests that
/// need its token, and nothing else. It is asked for every request; a `nil` or empty answer fails
/// that request with ``RequestError/missingCustomerToken(endpoint:)``. A request cancelled before
/// its turn does not call the provider.
public final class CustomerTokenProvider: AuthorizationProvider, @unchecked Sendable {
    // `@unchecked Sendable` is sound: `provider` is created inside `queue.async` and read only
    // inside later `queue.async` blocks; `queue` is serial, so every access to the non-Sendable
    // instance happens on one thread at a time, in order. The other stored properties are immutable.
    private let queue: DispatchQueue
    private var provider: (any AuthorizationProviderType)?
    private let makeProvider: () -> any AuthorizationProviderType
    /// The wrapped type's name, for diagnostics.
    public let providerTypeName: String

    /// Wraps a new instance of `type`, created on the provider's own queue on first use.
    public init(type: any AuthorizationProviderType.Type) {
        queue = DispatchQueue(label: "SDKAuthorization.CustomerTokenProvider.\(String(reflecting: type))")
        providerTypeName = String(reflecting: type)
        makeProvider = { type.init() }
    }

    public func credential(for context: AuthorizationContext) async throws -> Credential {
        let cancelled = Locked(false)
        let token: String? = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String?, any Error>) in
                queue.async {
                    if cancelled.withLock({ $0 }) {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    let provider = self.provider ?? self.makeProvider()
                    self.provider = provider
                    continuation.resume(returning: provider.getAuthorizationToken())
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
        guard let token, !token.isEmpty else { throw RequestError.missingCustomerToken(endpoint: context.endpoint) }
        return .token(token)
    }
}
