import Foundation
import ProviderRegistrationGenerator
import SDKAuthorization
import SDKAuthorizationModeKit

/// The authorization doctor behind `sdkauth-config` and the `authorization-doctor` and
/// `validate-authorization-config` command plugins.
///
/// ```
/// sdkauth-config [--package-directory DIR] [--linked-products LIST] [--target-products DIR=LIST ...]
///                [--mode-description PATH ...] [--jwt TOKEN|-] [FILE ...]
/// ```
///
/// - `FILE ...`: check these configuration files (relative paths are read from the package
///   directory, else the current one, which is also where paths are shown from and the highest
///   folder a provider manifest is looked for in);
/// - `--linked-products LIST`: the products the app links, comma-separated (may be empty): a
///   built-in mode name whose product is not among them is an error, as it is in the app. The
///   `authorization-doctor` plugin passes the SDKAuthorization products the package's targets
///   depend on; without it every built-in mode is taken as linked, and a note says so;
/// - `--target-products DIR=LIST` (repeatable): the products the target in `DIR` links; a file in
///   `DIR` (the deepest such folder) is judged by that list instead of `--linked-products`. The
///   plugin passes one for each of the package's source targets;
/// - `--mode-description PATH` (repeatable): the description (`sdkauth-mode.json`, see
///   ``ModeDescription``) of a mode written outside the framework, registered under its
///   `providerName` with its keys, so a configuration choosing it is checked as the app reads it.
///   The plugin passes every `sdkauth-mode.json` in the folders of the targets a target depends on.
///   A description the doctor refuses is an error, and no configuration file is then checked;
/// - `--jwt TOKEN`: decode a token's header and claims (`-` reads it from standard input);
/// - neither: check every configuration file in the package directory (see
///   ``ConfigurationFiles/rule``), or say that there is none.
package enum Doctor {
    package static let usage = """
        usage: swift package authorization-doctor [--jwt TOKEN] [FILE ...]   (or validate-authorization-config)
               sdkauth-config [--package-directory DIR] [--linked-products LIST] [--target-products DIR=LIST ...]
                              [--mode-description PATH ...] [--jwt TOKEN|-] [FILE ...]
          FILE ...      check these authorization configuration files (JSON or property list)
          --linked-products LIST
                        the products the app links, comma-separated (the plugin passes them); a
                        built-in mode name whose product is not linked is an error
          --target-products DIR=LIST
                        the same for the files of the target in DIR (the plugin passes one a target)
          --mode-description PATH
                        a mode written outside the framework, described by its sdkauth-mode.json
                        (the plugin passes those of the package's dependencies); repeatable
          --jwt TOKEN   decode a JWT's header and claims and check alg and exp ('-' reads standard input)
          (neither)     check every configuration file in the package: \(ConfigurationFiles.rule)
        """

    /// The most read from standard input for `--jwt -`: the longest token the framework parses,
    /// with room for a `Bearer ` scheme and white space. One byte more is read, so a longer input
    /// is refused as too long instead of being read to its end (`/dev/zero` has none).
    package static let maximumStandardInput = JWTClaims.maximumTokenLength + 1_024

    /// The token `--jwt -` reads from `handle`: at most ``maximumStandardInput`` + 1 bytes, or nil
    /// when they are not UTF-8.
    package static func readToken(from handle: FileHandle) -> String? {
        var data = Data()
        while data.count <= maximumStandardInput {
            guard let chunk = try? handle.read(upToCount: maximumStandardInput + 1 - data.count), !chunk.isEmpty else { break }
            data += chunk
        }
        return String(data: data, encoding: .utf8)
    }

    /// What the command line asked for.
    package struct Request: Equatable {
        package var packageDirectory: String?
        package var token: String?
        package var files: [String] = []
        package var help = false
        /// `--linked-products`: nil when not given.
        var linkedProducts: Set<String>?
        /// `--target-products`: each target directory as given, and what it links.
        var targetProducts: [String: Set<String>] = [:]
        /// `--mode-description`: each description's path as given, in order.
        var modeDescriptions: [String] = []
    }

    /// Reads the arguments (without the program name). `readStandardInput` gives the token for `--jwt -`.
    package static func parse(_ arguments: [String], readStandardInput: () -> String?) -> Result<Request, UsageError> {
        var request = Request()
        var rest = arguments[...]
        var optionsEnded = false
        while let argument = rest.popFirst() {
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                request.files.append(argument)
                continue
            }
            let (option, inline) = splitInline(argument)
            switch option {
            case "--":
                optionsEnded = true
            case "-h", "--help":
                request.help = true
            case "--package-directory", "--jwt", "--linked-products", "--target-products", "--mode-description":
                guard let value = inline ?? rest.popFirst() else { return .failure(UsageError("\(option) needs a value")) }
                if option == "--linked-products" {
                    guard request.linkedProducts == nil else { return .failure(UsageError("--linked-products is given twice")) }
                    request.linkedProducts = productList(value)
                } else if option == "--target-products" {
                    // Product names hold no '=', a directory may: the last one splits.
                    guard let equals = value.lastIndex(of: "="), equals != value.startIndex else {
                        return .failure(UsageError("--target-products needs DIR=LIST"))
                    }
                    request.targetProducts[String(value[..<equals])] = productList(String(value[value.index(after: equals)...]))
                } else if option == "--mode-description" {
                    request.modeDescriptions.append(value)
                } else if option == "--package-directory" {
                    request.packageDirectory = value
                } else {
                    guard request.token == nil else { return .failure(UsageError("--jwt is given twice")) }
                    guard value != "-" else {
                        guard let read = readStandardInput(), !read.isEmpty else { return .failure(UsageError("--jwt - read no token from standard input")) }
                        request.token = read
                        continue
                    }
                    request.token = value
                }
            default:
                return .failure(UsageError("unknown option \(LogText.escapedOption(option))"))
            }
        }
        return .success(request)
    }

    /// A comma-separated list of products; empty names are dropped.
    static func productList(_ value: String) -> Set<String> {
        Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }

    /// What the app links for `file`: the list of the deepest `--target-products` directory holding
    /// it, else `--linked-products`, else nil (not told).
    static func linkedProducts(for file: URL, request: Request, base: URL) -> Set<String>? {
        let path = file.standardizedFileURL.path
        var best: (length: Int, products: Set<String>)?
        for (directory, products) in request.targetProducts {
            let folder = URL(fileURLWithPath: directory, isDirectory: true, relativeTo: base).standardizedFileURL.path
            let prefix = folder.hasSuffix("/") ? folder : folder + "/"
            if path.hasPrefix(prefix), prefix.count > (best?.length ?? -1) { best = (prefix.count, products) }
        }
        return best?.products ?? request.linkedProducts
    }

    /// A mistake in the command line.
    package struct UsageError: Error, Equatable {
        package var message: String
        init(_ message: String) { self.message = message }
    }

    /// Runs the doctor. `now` is the time tokens are judged at; `currentDirectory` resolves
    /// relative paths when no package directory is given.
    package static func run(_ arguments: [String], now: Date, currentDirectory: URL, readStandardInput: () -> String? = { nil }) -> DoctorReport {
        let request: Request
        switch parse(arguments, readStandardInput: readStandardInput) {
        case .success(let parsed): request = parsed
        case .failure(let error):
            return DoctorReport(findings: [Finding(.error, error.message), Finding(.note, usage)], usageError: true)
        }
        if request.help { return DoctorReport(findings: [Finding(.note, usage)]) }

        // The package directory, or the current one: where relative paths start, files are looked
        // for, paths are shown from, and a manifest is looked for no higher than.
        let base = request.packageDirectory.map { URL(fileURLWithPath: $0, isDirectory: true, relativeTo: currentDirectory) } ?? currentDirectory
        var report = DoctorReport()
        if let token = request.token {
            report.findings += TokenCheck.check(token, now: now)
        }
        let (described, descriptionFindings) = readModeDescriptions(request.modeDescriptions, base: base)
        report.findings += descriptionFindings
        var files = request.files.map { URL(fileURLWithPath: $0, relativeTo: base).standardizedFileURL }
        if files.isEmpty, request.token == nil {
            files = ConfigurationFiles.find(in: base)
            if files.isEmpty {
                report.findings.append(Finding(.note, "No authorization configuration files in \(base.path) (looked for \(ConfigurationFiles.rule)); nothing to check."))
                return report
            }
        }
        // A refused description leaves a mode the app has out of the doctor's registry: the files'
        // verdicts would be wrong, as with a broken manifest.
        if descriptionFindings.contains(where: { $0.severity == .error }) {
            for file in files {
                report.findings.append(Finding(.error, file: ConfigurationFiles.displayPath(file, root: base),
                                               "not checked: a mode description (--mode-description) is invalid"))
            }
            return report
        }
        var manifests = ManifestCache()
        for file in files {
            report.findings += checkFile(file, root: base, manifests: &manifests,
                                         linkedProducts: linkedProducts(for: file, request: request, base: base), describedModes: described)
        }
        return report
    }

    /// The modes described at `paths` (relative ones from `base`), each file read once, and an
    /// error for each problem (`path:line:column`), for a second description of one name, and
    /// for a file that cannot be read.
    static func readModeDescriptions(_ paths: [String], base: URL) -> ([ConfigurationCheck.DescribedMode], [Finding]) {
        var modes: [ConfigurationCheck.DescribedMode] = []
        var findings: [Finding] = []
        var seen: Set<String> = []
        for path in paths {
            let url = URL(fileURLWithPath: path, relativeTo: base).standardizedFileURL
            guard seen.insert(url.path).inserted else { continue }
            let shown = ConfigurationFiles.displayPath(url, root: base)
            switch ModeDescription.read(atPath: url.path) {
            case .success(let description):
                if let earlier = modes.first(where: { $0.description.providerName == description.providerName }) {
                    findings.append(Finding(.error, file: shown,
                                            "the mode \(LogText.typeName(description.providerName)) is described already by \(LogText.readable(earlier.shownAs, limit: 512)); one description a mode"))
                } else {
                    modes.append(ConfigurationCheck.DescribedMode(description: description, shownAs: shown))
                }
            case .failure(let problems):
                findings += problems.list.map { Finding(.error, file: "\(shown):\($0.position)", $0.text) }
            }
        }
        return (modes, findings)
    }

    /// A manifest read once for every configuration file it serves: `nil` when it is broken.
    typealias ManifestCache = [URL: ProviderManifest?]

    /// One file's findings, preceded by its manifest's the first time that manifest is read (a
    /// broken manifest is an error of its own, and the file is then not checked for start-up).
    static func checkFile(_ file: URL, root: URL?, manifests: inout ManifestCache, linkedProducts: Set<String>? = nil,
                          describedModes: [ConfigurationCheck.DescribedMode] = []) -> [Finding] {
        let shown = ConfigurationFiles.displayPath(file, root: root)
        guard let manifestURL = ConfigurationFiles.manifestURL(for: file, root: root) else {
            return ConfigurationCheck.check(file, displayPath: shown, target: .init(linkedProducts: linkedProducts, describedModes: describedModes))
        }
        let manifestPath = ConfigurationFiles.displayPath(manifestURL, root: root)
        var findings: [Finding] = []
        if manifests[manifestURL] == nil {
            // The build-time generator's reader: the same limits, and each problem as the build
            // reports it (`path:line:column: error: entry "Name": message`).
            switch ProviderManifest.read(atPath: manifestURL.path) {
            case .success(let manifest):
                manifests[manifestURL] = .some(manifest)
                findings += ProviderSourceScan.check(manifest, at: manifestURL, shownAs: manifestPath)
            case .failure(let problems):
                manifests[manifestURL] = .some(nil)
                findings += problems.list.map { problem in
                    Finding(.error, file: "\(manifestPath):\(problem.position)", problem.entry.map { "\($0): \(problem.message)" } ?? problem.message)
                }
            }
        }
        guard case .some(.some(let manifest)) = manifests[manifestURL] else {
            return findings + [Finding(.error, file: shown, "not checked for start-up: its provider manifest \(manifestPath) is invalid")]
        }
        return findings + ConfigurationCheck.check(file, displayPath: shown,
                                                   target: .init(manifest: manifest, manifestURL: manifestURL, linkedProducts: linkedProducts,
                                                                 describedModes: describedModes))
    }

    private static func splitInline(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}

extension LogText {
    /// An option as typed, escaped: it may be a token pasted in the wrong place, so it is cut short.
    static func escapedOption(_ option: String) -> String { escaped(option, limit: 24) }
}
