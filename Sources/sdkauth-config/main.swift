import Foundation
import SDKAuthorization
import SDKAuthorizationEngagement

// Checks configuration files the way the framework reads them, and says what is wrong with each.
// Used by the `validate-authorization-config` command plugin:
//   swift package validate-authorization-config path/to/authorization.json

func write(_ text: String, to handle: FileHandle) {
    handle.write(Data((text + "\n").utf8))
}

let paths = Array(CommandLine.arguments.dropFirst())
guard !paths.isEmpty else {
    write("usage: sdkauth-config FILE [FILE ...]   (JSON or property-list authorization configuration)", to: .standardError)
    exit(64)
}

var failures = 0
for path in paths {
    do {
        let configuration = try AuthorizationConfiguration(contentsOf: URL(fileURLWithPath: path))
        let lookup: String = switch configuration.providerLookup {
        case .implicitName(let name): "provider name \(name)"
        case .registeredClassName(let name?): "registered class \(name)"
        case .registeredClassName(nil): "registered class (none named)"
        }
        let authorization = configuration.authorization.map(String.init(describing:)) ?? "no project authorization"
        let advanced = configuration.advancedAuthEnabled ? "advanced auth on, \(lookup)" : "advanced auth off"
        write("ok    \(path): project \(configuration.projectToken) at \(configuration.baseURL.absoluteString), \(authorization), \(advanced)", to: .standardOutput)
    } catch {
        failures += 1
        write("error \(path): \(error.message)", to: .standardError)
    }
}
exit(failures == 0 ? 0 : 1)
