/**
 * Every relative link and anchor in the documentation resolves (issue #37): README.md, docs/*.md and
 * every module README and the task pane's TESTING.md / TESTIDS.md. A link to a file needs the file;
 * a link with `#anchor` needs a heading of that slug in the target (GitHub's rule: lower case, only
 * letters, digits, spaces, `-` and `_` kept, spaces to `-`, a repeated heading gets `-1`, `-2`).
 * Links to other sites are not fetched (the network is closed; they are cited sources).
 */
import * as fs from "fs";
import * as path from "path";

const root = path.resolve(__dirname, "..", "..");

function markdownFiles(): string[] {
  const out = ["README.md"];
  for (const f of fs.readdirSync(path.join(root, "docs"))) if (f.endsWith(".md")) out.push(`docs/${f}`);
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith(".md")) out.push(rel);
    }
  };
  walk("src");
  return out.sort();
}

/** The file's text outside fenced code blocks and code spans (links there are examples, not links). */
function prose(text: string): string {
  return text
    .replace(/^```[\s\S]*?^```/gm, "")
    .split("\n")
    .filter((l) => !/^ {4}/.test(l))
    .join("\n")
    .replace(/`[^`\n]*`/g, "``");
}

/** GitHub's heading anchors (github-slugger), in document order. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const plain = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[`*_]{1,2}(?=\S)|(?<=\S)[`*_]{1,2}/g, (s) => (s.includes("_") ? s : ""));
    let slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    if (n > 0) slug = `${slug}-${n}`;
    out.add(slug);
  }
  return out;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

function links(file: string): Link[] {
  const text = prose(fs.readFileSync(path.join(root, file), "utf8"));
  const out: Link[] = [];
  text.split("\n").forEach((l, i) => {
    for (const m of l.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ file, line: i + 1, target: m[1] });
  });
  return out;
}

/** The links of `file` (relative to the repository) that do not resolve, described. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const l of links(file)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(l.target)) continue; // http(s), mailto: another site
    const [p, hash] = l.target.split("#", 2);
    const target = p === "" ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), decodeURIComponent(p));
    if (!target.startsWith(root + path.sep)) {
      // ../shared beside the checkout may be named; it is not part of this repository.
      if (!target.startsWith(path.resolve(root, "..", "shared"))) broken.push(`${l.file}:${l.line} ${l.target}: outside the repository`);
      continue;
    }
    if (!fs.existsSync(target)) {
      broken.push(`${l.file}:${l.line} ${l.target}: no such file`);
      continue;
    }
    if (hash === undefined || hash === "" || !target.endsWith(".md")) continue; // anchors into code or HTML are not checked
    if (!anchors(fs.readFileSync(target, "utf8")).has(hash)) broken.push(`${l.file}:${l.line} ${l.target}: no heading #${hash} in ${path.relative(root, target)}`);
  }
  return broken;
}

const files = markdownFiles();

describe("documentation links", () => {
  it("finds the documents it checks", () => {
    expect(files).toEqual(expect.arrayContaining(["README.md", "docs/architecture.md", "docs/development.md", "src/functions/README.md", "src/taskpane/TESTING.md"]));
    expect(files.length).toBeGreaterThan(15);
  });

  it.each(files)("every relative link and anchor in %s resolves", (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it("computes anchors as GitHub does", () => {
    const a = anchors("# A\n## The browser preview's toolbar\n## `npm test`\n## Environments on localhost (Local Network Access)\n## Show changes (issue #15)\n## A\n```\n## not a heading\n```\n");
    expect([...a]).toEqual(["a", "the-browser-previews-toolbar", "npm-test", "environments-on-localhost-local-network-access", "show-changes-issue-15", "a-1"]);
  });

  it("catches a missing file and a missing heading (the check can fail)", () => {
    const tmp = path.join(root, "test-results", "links-probe.md");
    fs.mkdirSync(path.dirname(tmp), { recursive: true });
    fs.writeFileSync(tmp, "[x](../README.md#no-such-heading) [y](nowhere.md) [z](../README.md#documentation) `[w](code.md)`\n");
    try {
      expect(brokenLinks(path.relative(root, tmp))).toEqual([
        "test-results/links-probe.md:1 ../README.md#no-such-heading: no heading #no-such-heading in README.md",
        "test-results/links-probe.md:1 nowhere.md: no such file",
      ]);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  });
});

describe("README.md (issue #37)", () => {
  it("is at most 350 lines: the walkthrough, the two commands, Excel, administrators and links; the rest lives in docs/", () => {
    const lines = fs.readFileSync(path.join(root, "README.md"), "utf8").split("\n").length;
    expect(lines).toBeLessThanOrEqual(350);
  });

  it("links every document in docs/", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
    const unlinked = fs.readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md") && !readme.includes(`(docs/${f}`));
    expect(unlinked).toEqual([]);
  });
});
