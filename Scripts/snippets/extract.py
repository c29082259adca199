#!/usr/bin/env python3
"""Extracts every ```swift block of the README and the DocC articles and lays them out as a package
that compiles each one as printed.

Each block is one executable module: the block is its main.swift, exactly as printed (a
#sourceLocation line points compiler messages at the Markdown file and line). The line before a
block may name how it is checked, in an HTML comment that Markdown does not show:

  (none)                           compiled alone. A block that imports nothing continues the one
                                   before it: it gets the imports the README promises (Foundation,
                                   FoundationNetworking where it exists, the core and the four modes).
  <!-- snippet: NAME -->           also compiled with Scripts/snippets/NAME.swift beside it in its
                                   module (declarations the prose gives the block: `client`, `url`...).
                                   That file is a second file of the module: it adds no import to
                                   the block.
  <!-- snippet: manifest -->       a Package.swift fragment: `dependencies: [...]` or a target,
                                   loaded in a manifest by `swift package dump-package`.
  <!-- snippet: compiled-in DIR --> compiled by another package's tests: every line of the block
                                   must appear, in order, in one Swift file under DIR.

Usage: extract.py ROOT OUTPUT  (writes OUTPUT/package and OUTPUT/manifests/N; prints a summary)
"""
import json
import os
import re
import sys

root, output = sys.argv[1], sys.argv[2]
def docc_articles(directory):
    return sorted(
        os.path.join(dirpath, name)[len(root) + 1:]
        for dirpath, _, names in os.walk(directory)
        if dirpath.endswith(".docc") and "/.build" not in dirpath
        for name in names if name.endswith(".md")
    )


# The README, the framework's DocC articles and each adapter package's (Integrations/<Adapter>/Sources).
documents = ["README.md"] + docc_articles(os.path.join(root, "Sources")) + [
    article
    for adapter in sorted(os.listdir(os.path.join(root, "Integrations")))
    if os.path.isdir(os.path.join(root, "Integrations", adapter, "Sources"))
    for article in docc_articles(os.path.join(root, "Integrations", adapter, "Sources"))
]
annotation = re.compile(r"^<!--\s*snippet:\s*(.+?)\s*-->\s*$")
implicit_imports = """import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SDKAuthorization
import SDKAuthorizationEngagement
import SDKAuthorizationIDToken
import SDKAuthorizationSignature
import SDKAuthorizationTokenExchange
"""

blocks = []
for document in documents:
    lines = open(os.path.join(root, document), encoding="utf-8").read().split("\n")
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```swift":
            kind = "compile"
            match = annotation.match(lines[index - 1].strip()) if index > 0 else None
            if match:
                kind = match.group(1)
            indent = len(lines[index]) - len(lines[index].lstrip())
            start = index + 1
            end = start
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            if end == len(lines):
                sys.exit(f"{document}:{index + 1}: a ```swift block that never ends")
            body = [line[indent:] if line[:indent].strip() == "" else line for line in lines[start:end]]
            blocks.append({"document": document, "line": start + 1, "kind": kind, "body": body})
            index = end
        index += 1

package_dir = os.path.join(output, "package")
manifests_dir = os.path.join(output, "manifests")
os.makedirs(package_dir, exist_ok=True)
os.makedirs(manifests_dir, exist_ok=True)
targets = []
manifests = []
elsewhere = []
problems = []
contexts_dir = os.path.join(root, "Scripts", "snippets")
for number, block in enumerate(blocks, 1):
    where = f"{block['document']}:{block['line']}"
    kind = block["kind"]
    text = "\n".join(block["body"]) + "\n"
    if kind == "manifest":
        manifests.append({"where": where, "text": text})
        continue
    if kind.startswith("compiled-in "):
        directory = os.path.join(root, kind[len("compiled-in "):].strip())
        wanted = [line.strip() for line in block["body"] if line.strip()]
        found = False
        for dirpath, _, names in os.walk(directory):
            if "/.build" in dirpath:
                continue
            for name in names:
                if not name.endswith(".swift"):
                    continue
                have = [line.strip() for line in open(os.path.join(dirpath, name), encoding="utf-8")]
                position = 0
                for line in have:
                    if position < len(wanted) and line == wanted[position]:
                        position += 1
                if position == len(wanted):
                    found = True
        if not found:
            problems.append(f"{where}: the block is not, line for line, in any Swift file under {kind[len('compiled-in '):]}")
        elsewhere.append(where)
        continue
    if block["document"].startswith("Integrations/"):
        problems.append(f"{where}: an adapter's example needs the adapter's dependencies: mark it <!-- snippet: compiled-in Integrations/<Adapter> -->")
        continue
    context = None
    if kind != "compile":
        context = os.path.join(contexts_dir, kind + ".swift")
        if not os.path.isfile(context):
            problems.append(f"{where}: no context Scripts/snippets/{kind}.swift")
            continue
    name = f"Snippet{number:02d}"
    target_dir = os.path.join(package_dir, "Sources", name)
    os.makedirs(target_dir, exist_ok=True)
    imports_anything = any(re.match(r"^\s*(@\w+\s+)?import\s", line) for line in block["body"])
    source = "" if imports_anything else implicit_imports
    source += f'#sourceLocation(file: "{os.path.join(root, block["document"])}", line: {block["line"]})\n' + text
    source += "#sourceLocation()\n"
    open(os.path.join(target_dir, "main.swift"), "w", encoding="utf-8").write(source)
    if context:
        open(os.path.join(target_dir, "Context.swift"), "w", encoding="utf-8").write(open(context, encoding="utf-8").read())
    targets.append({"name": name, "where": where})

products = ["SDKAuthorization", "SDKAuthorizationEngagement", "SDKAuthorizationIDToken", "SDKAuthorizationSignature", "SDKAuthorizationTokenExchange"]
dependencies = ", ".join(f'.product(name: "{product}", package: "SDKAuthorization")' for product in products)
target_lines = ",\n        ".join(
    f'.executableTarget(name: "{target["name"]}", dependencies: [{dependencies}])' for target in targets
)
manifest = f"""// swift-tools-version: 6.0
// Generated by Scripts/snippets/extract.py: one module per Swift block of the README and DocC.
import PackageDescription

let package = Package(
    name: "Snippets",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "SDKAuthorization", path: {json.dumps(os.path.abspath(root))})],
    targets: [
        {target_lines}
    ],
    swiftLanguageModes: [.v6]
)
"""
open(os.path.join(package_dir, "Package.swift"), "w", encoding="utf-8").write(manifest)

for number, block in enumerate(manifests, 1):
    text = block["text"].strip()
    if text.startswith("dependencies:"):
        body = f'name: "Snippet",\n{text.rstrip(",")},\ntargets: []'
    else:
        body = (
            'name: "Snippet",\n'
            'dependencies: [.package(url: "https://github.com/sdkauthorization/swift-sdk-authorization.git", from: "0.1.0")],\n'
            f"targets: [\n{text}\n]"
        )
    directory = os.path.join(manifests_dir, f"{number:02d}")
    os.makedirs(directory, exist_ok=True)
    open(os.path.join(directory, "Package.swift"), "w", encoding="utf-8").write(
        "// swift-tools-version: 6.0\nimport PackageDescription\n\nlet package = Package(\n" + body + "\n)\n"
    )
    open(os.path.join(directory, "WHERE"), "w").write(block["where"])

for problem in problems:
    print(problem, file=sys.stderr)
print(f"{len(blocks)} Swift blocks in {len(documents)} files: {len(targets)} compiled as modules, "
      f"{len(manifests)} manifest fragments, {len(elsewhere)} compiled elsewhere")
sys.exit(1 if problems else 0)
