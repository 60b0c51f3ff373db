#!/usr/bin/env bash
# Validates manifest.xml (and the production build's copy, if built) against the task-pane
# manifest schemas in ../shared, offline. `npm run validate` is the online validator.
set -euo pipefail
cd "$(dirname "$0")/.."
schema=../shared/schemas/office-addin-manifest/OfficeAppManifestV1_1.xsd
if [ ! -f "$schema" ]; then echo "manifest schema not found at $schema (../shared missing)" >&2; exit 2; fi
command -v xmllint >/dev/null || { echo "xmllint not installed (Debian: apt-get install libxml2-utils)" >&2; exit 2; }
for f in manifest.xml "$@"; do xmllint --noout --nonet --schema "$schema" "$f"; done
