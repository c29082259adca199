import Foundation
import ProviderRegistrationGenerator

// The build-time provider registration's generator; the RegisterAuthorizationProviders plugin runs
// it for each target that applies the plugin. The logic and its tests are in ProviderRegistrationGenerator.
let (status, errors) = RegisterProvidersCommand.run(arguments: Array(CommandLine.arguments.dropFirst()))
for line in errors {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
exit(status)
