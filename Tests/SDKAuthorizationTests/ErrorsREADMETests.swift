import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
import SDKAuthorization

/// The README's "Errors" example, verbatim inside a namespace, so it keeps compiling (and without
/// a warning: the `catch` block's `error` is a `RequestError` already, and in the task group's
/// closure because its `do` says `throws(RequestError)`);
/// `errorsExampleInTheREADMEIsTheCodeCompiledHere` checks that the README still says the same.
enum ErrorsREADME {
    static func loadProfile(_ authorizer: RequestAuthorizer, url: URL) async -> String {
        do {
            let (data, _) = try await authorizer.data(for: URLRequest(url: url))
            return String(decoding: data, as: UTF8.self)
        } catch {   // a RequestError: data(for:using:) throws nothing else
            switch error.code {
            case .authorizationRejected: return "signed out (HTTP \(error.statusCode ?? 0))"   // 401 or 403 after the one retry
            case .transportFailed, .deadlineExceeded: return "offline, try again"
            default: return error.description   // what happened, in a sentence; never a credential
            }
        }
    }

    static func loadAll(_ authorizer: RequestAuthorizer, urls: [URL]) async -> [String] {
        await withTaskGroup(of: String.self) { group in
            for url in urls {
                group.addTask {
                    do throws(RequestError) {   // in a closure, say what the do block throws
                        let (data, _) = try await authorizer.data(for: URLRequest(url: url))
                        return String(decoding: data, as: UTF8.self)
                    } catch {
                        return "\(error.code)"
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }
}

@Suite("README errors example", .hangLimit)
struct ErrorsREADMETests {
    @Test func errorsExampleInTheREADMEIsTheCodeCompiledHere() throws {
        #expect(try readmeBlocksMatchCompiledCopy(heading: "## Errors", source: #filePath) == 2)
    }
}
