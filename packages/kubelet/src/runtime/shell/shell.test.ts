import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { NodeFilesystem } from "../../node-filesystem.js";
import { execCollect } from "../container-process.js";

function host(clock = new FakeClock(Date.UTC(2026, 10, 28, 13, 57, 21)), signal?: AbortSignal) {
  const layer = new NodeFilesystem();
  const config = new NodeFilesystem();
  config.writeFile("/cm/greeting", "hello\n");
  return {
    clock,
    hostname: "web-0",
    signal,
    resolve: (path: string) =>
      path.startsWith("/config")
        ? { filesystem: config, path: `/cm${path.slice("/config".length)}`, readOnly: true }
        : { filesystem: layer, path, readOnly: false },
  };
}

const spec = {
  image: "docker.io/library/busybox:latest",
  hostname: "web-0",
  env: [{ name: "GREETING", value: "hi there" }],
};

async function sh(script: string) {
  return execCollect(["sh", "-c", script], spec, host());
}

describe("the simulated containers' shell", () => {
  // [script, stdout, stderr, exit code]
  const cases: [string, string, string, number][] = [
    ["echo hi", "hi\n", "", 0],
    ["echo -n a; echo b", "ab\n", "", 0],
    ["echo -e 'a\\tb'", "a\tb\n", "", 0],
    ["printf '%s-%d|%5s|%-3s|\\n' x 42 r l", "x-42|    r|l  |\n", "", 0],
    ["printf '%s\\n' a b c", "a\nb\nc\n", "", 0],
    ["exit 3", "", "", 3],
    ["false; exit", "", "", 1],
    ["exit 300", "", "", 44],
    ["true && echo yes || echo no", "yes\n", "", 0],
    ["false && echo yes || echo no", "no\n", "", 0],
    ["foo", "", "sh: foo: not found\n", 127],
    ["foo; echo $?", "127\n", "sh: foo: not found\n", 0],
    ["echo $GREETING", "hi there\n", "", 0],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
    ['echo "$GREETING" ${HOSTNAME}', "hi there web-0\n", "", 0],
    ["echo '$GREETING'", "$GREETING\n", "", 0],
    ["X=1; Y=$((X + 2 * 3)); echo $Y", "7\n", "", 0],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, not a template
    ["echo ${MISSING:-fallback}", "fallback\n", "", 0],
    ["for i in 1 2 3; do echo n$i; done", "n1\nn2\nn3\n", "", 0],
    ["for i in $(seq 2); do echo $i; done", "1\n2\n", "", 0],
    ["i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done", "0\n1\n2\n", "", 0],
    ["i=0; until [ $i -eq 2 ]; do i=$((i+1)); done; echo $i", "2\n", "", 0],
    ['if [ -z "$NOPE" ]; then echo empty; else echo set; fi', "empty\n", "", 0],
    ["if false; then echo a; elif true; then echo b; fi", "b\n", "", 0],
    ["echo out; echo err >&2", "out\n", "err\n", 0],
    ["{ echo a; echo b >&2; } 2>&1 | wc -l", "2\n", "", 0],
    ["echo one > /f; echo two >> /f; cat /f", "one\ntwo\n", "", 0],
    ["echo x > /config/y", "", "sh: can't create /config/y: Read-only file system\n", 1],
    ["cat /config/greeting", "hello\n", "", 0],
    ["cat /nope", "", "cat: can't open '/nope': No such file or directory\n", 1],
    ["mkdir -p /d/e && touch /d/e/f && ls /d/e", "f\n", "", 0],
    ["echo a b c | wc -w", "3\n", "", 0],
    ["printf 'x\\ny\\nz\\n' | tail -n 2", "y\nz\n", "", 0],
    ["printf 'apple\\nbanana\\n' | grep an", "banana\n", "", 0],
    ["printf 'a\\nb\\n' | while read line; do echo got $line; done", "got a\ngot b\n", "", 0],
    ["hostname; whoami", "web-0\nroot\n", "", 0],
    ["date", "Sat Nov 28 13:57:21 UTC 2026\n", "", 0],
    ["date +%Y-%m-%dT%H:%M:%S", "2026-11-28T13:57:21\n", "", 0],
    ["seq 3", "1\n2\n3\n", "", 0],
    ["seq 2 2 6", "2\n4\n6\n", "", 0],
    ["echo $(echo inner) `echo back`", "inner back\n", "", 0],
    ["(cd /d 2>/dev/null; exit 4); echo $?", "4\n", "", 0],
    ["set -e; false; echo unreachable", "", "", 1],
    ["set -e; if false; then :; fi; echo reached", "reached\n", "", 0],
    ["! false && echo negated", "negated\n", "", 0],
    ["echo 'unterminated", "", "sh: syntax error: unterminated quoted string\n", 2],
    ["if true; then echo x", "", 'sh: syntax error: unexpected "end of file" (expecting "fi")\n', 2],
    ["sleep x", "", "sleep: invalid number 'x'\n", 1],
    ["basename /a/b/c.txt .txt; dirname /a/b/c.txt", "c\n/a/b\n", "", 0],
    ["env | grep GREETING", "GREETING=hi there\n", "", 0],
    ["sh -c 'exit 7'; echo $?", "7\n", "", 0],
    ["[ 1 -eq 1 ] && [ abc = abc ] && [ ! -d /nope ] && echo ok", "ok\n", "", 0],
  ];
  it.each(cases)("%s", async (script, stdout, stderr, exitCode) => {
    expect(await sh(script)).toEqual({ stdout, stderr, exitCode });
  });

  it("runs a program without a shell and fails an unknown one with 127", async () => {
    expect(await execCollect(["echo", "a", "b"], spec, host())).toEqual({
      exitCode: 0,
      stdout: "a b\n",
      stderr: "",
    });
    expect(await execCollect(["/bin/nope"], spec, host())).toEqual({
      exitCode: 127,
      stdout: "",
      stderr: "sh: /bin/nope: not found\n",
    });
  });

  it("sleeps on the injected clock", async () => {
    const clock = new FakeClock(0);
    const run = execCollect(["sh", "-c", "sleep 2; date +%s; sleep 1m; date +%s"], spec, host(clock));
    await clock.advance(1_999);
    await clock.advance(1);
    await clock.advance(60_000);
    expect(await run).toEqual({ exitCode: 0, stdout: "2\n62\n", stderr: "" });
  });

  it("stops a script that never ends when its signal aborts, and keeps the event loop turning meanwhile", async () => {
    const stop = new AbortController();
    const run = execCollect(
      ["sh", "-c", "while true; do :; done"],
      spec,
      host(new FakeClock(0), stop.signal),
    );
    let turned = false;
    setImmediate(() => {
      turned = true;
      stop.abort(new Error("killed"));
    });
    await expect(run).rejects.toThrow("killed");
    expect(turned).toBe(true);
  });
});
