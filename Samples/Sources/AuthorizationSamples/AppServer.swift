import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's own server: it logs a user in and hands back a JWT signed with its private key.
/// (Here the reference backend plays that role at `POST /app/login`.)
public enum AppServer {
    struct LoginAnswer: Decodable {
        let token: String
    }

    static func loginRequest(baseURL: URL, userId: String, variant: String, lifetimeSeconds: Int?) -> URLRequest {
        var request = URLRequest(url: baseURL.appendingPathComponent("app/login"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        var body: [String: Any] = ["userId": userId, "variant": variant]
        if let lifetimeSeconds { body["lifetimeSeconds"] = lifetimeSeconds }
        request.httpBody = try? JSONSerialization.data(withJSONObject: body)
        return request
    }

    /// Logs `userId` in and returns the JWT. `variant` asks the reference backend for a deliberately
    /// bad token (`expired`, `wrongKey`, `otherSubject`, `wrongAlgorithm`, `missingExp`).
    public static func login(baseURL: URL, userId: String, variant: String = "valid", lifetimeSeconds: Int? = nil) async throws -> String {
        let request = loginRequest(baseURL: baseURL, userId: userId, variant: variant, lifetimeSeconds: lifetimeSeconds)
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw SampleError("login failed: \(String(decoding: data, as: UTF8.self))")
        }
        return try JSONDecoder().decode(LoginAnswer.self, from: data).token
    }

    /// The same, blocking the calling thread on a semaphore, exactly as the vendor documents for a
    /// synchronous provider. Returns nil when the login fails.
    public static func loginBlocking(baseURL: URL, userId: String, variant: String = "valid") -> String? {
        let request = loginRequest(baseURL: baseURL, userId: userId, variant: variant, lifetimeSeconds: nil)
        let semaphore = DispatchSemaphore(value: 0)
        let result = Mutex<String?>(nil)
        URLSession.shared.dataTask(with: request) { data, response, _ in
            if (response as? HTTPURLResponse)?.statusCode == 200, let data,
               let answer = try? JSONDecoder().decode(LoginAnswer.self, from: data) {
                result.withLock { $0 = answer.token }
            }
            semaphore.signal()
        }.resume()
        semaphore.wait()
        return result.withLock { $0 }
    }
}
