import Foundation

/// A folder of its own under the temporary directory, removed when the test is done.
final class ScratchPackage {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` at `path` (folders made as needed) and returns its URL.
    @discardableResult
    func write(_ path: String, _ text: String) throws -> URL {
        let file = url.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return file
    }
}

enum Files {
    static let good = #"{"projectToken": "p1", "baseURL": "https://api.example.com", "authorization": "Token k1"}"#
    static func advanced(_ extra: String, authorization: Bool = true) -> String {
        #"{"projectToken": "p1", "baseURL": "https://api.example.com", "advancedAuthEnabled": true"#
            + (authorization ? #", "authorization": "Token k1""# : "") + (extra.isEmpty ? "" : ", " + extra) + "}"
    }
    static func manifest(_ names: String...) -> String {
        #"{"providers": ["# + names.map { #"{"name": "\#($0)", "type": "MyApp.ExampleAuthProvider", "mode": "customerToken"}"# }
            .joined(separator: ", ") + "]}"
    }
}
