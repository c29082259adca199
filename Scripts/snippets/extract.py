#!/usr/bin/env python3
"""Extracts every ```swift block of the README and the DocC articles and lays them out as a package
that compiles each one as printed, with nothing the reader does not see.

A block that imports something starts a module of its own: it is that module's main.swift, exactly
as printed (a #sourceLocation line points compiler messages at the Markdown file and line), with
exactly the imports it shows. A block without an `import` line continues the block before it in the
same document: it is appended to that module, so it sees the imports and the declarations the
reader has just read, and nothing else. The first block of a document must show its imports. There
is no hidden context file: a name a block uses is declared in it, or in a block before it.

The line before a block may say it is checked another way, in an HTML comment Markdown does not show:

  <!-- snippet: manifest -->       a Package.swift fragment: `dependencies: [...]` or a target,
                                   loaded in a manifest by `swift package dump-package`.
  <!-- snippet: compiled-in DIR --> compiled by another package's tests (an adapter's, or the
                                   Samples package's, whose dependencies this package does not
                                   have): every line of the block must appear, in order, in one
                                   Swift file under DIR.

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
targets = []      # each: name, where, the document it belongs to, and its main.swift so far
manifests = []
elsewhere = []
problems = []
import_line = re.compile(r"^\s*(@\w+\s+)?import\s")
for block in blocks:
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
    if kind != "compile":
        problems.append(f"{where}: <!-- snippet: {kind} --> is not a way to check a block: a block compiles with what the text "
                        "shows (its imports, or the blocks before it), or is a manifest fragment, or is compiled-in DIR")
        continue
    if block["document"].startswith("Integrations/"):
        problems.append(f"{where}: an adapter's example needs the adapter's dependencies: mark it <!-- snippet: compiled-in Integrations/<Adapter> -->")
        continue
    located = f'#sourceLocation(file: "{os.path.join(root, block["document"])}", line: {block["line"]})\n' + text + "#sourceLocation()\n"
    if any(import_line.match(line) for line in block["body"]):
        targets.append({"name": f"Snippet{len(targets) + 1:02d}", "where": where, "document": block["document"], "source": located})
    elif targets and targets[-1]["document"] == block["document"]:
        targets[-1]["source"] += located
        targets[-1]["where"] += f", {block['line']}"
    else:
        problems.append(f"{where}: the first Swift block of a document must show its imports (a block without them continues the one before it)")

for target in targets:
    target_dir = os.path.join(package_dir, "Sources", target["name"])
    os.makedirs(target_dir, exist_ok=True)
    open(os.path.join(target_dir, "main.swift"), "w", encoding="utf-8").write(target["source"])

products = ["SDKAuthorization", "SDKAuthorizationModeKit", "SDKAuthorizationEngagement", "SDKAuthorizationIDToken", "SDKAuthorizationSignature", "SDKAuthorizationTokenExchange", "SDKAuthorizationTesting"]
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
print(f"{len(blocks)} Swift blocks in {len(documents)} files: {len(targets)} modules (a block with imports and those continuing it), "
      f"{len(manifests)} manifest fragments, {len(elsewhere)} compiled elsewhere")
sys.exit(1 if problems else 0)
