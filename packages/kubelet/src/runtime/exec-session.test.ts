import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { NodeFilesystem } from "../node-filesystem.js";
import { startExecSession } from "./exec-session.js";

const spec = { image: "docker.io/library/busybox:latest", hostname: "box" };
const encode = (text: string) => new TextEncoder().encode(text);

function session(argv: string[], options: { stdin: boolean; tty: boolean }, clock = new FakeClock(0)) {
  const layer = new NodeFilesystem();
  const host = {
    clock,
    hostname: "box",
    resolve: (path: string) => ({ filesystem: layer, path, readOnly: false }),
  };
  const exec = startExecSession(argv, spec, host, options);
  const chunks: string[] = [];
  exec.onOutput((stream, data) => chunks.push(`${stream}:${new TextDecoder().decode(data)}`));
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return { exec, chunks, settle };
}

describe("exec sessions", () => {
  it("an interactive sh without a tty runs each line as it arrives, and ends on exit", async () => {
    const { exec, chunks, settle } = session(["/bin/sh"], { stdin: true, tty: false });
    exec.write(encode("echo test string 1\n"));
    await settle();
    expect(chunks).toEqual(["stdout:test string 1\n"]);
    exec.write(encode("echo test string 2 >&2\nfor i in 1 2\n"));
    await settle();
    expect(chunks).toEqual(["stdout:test string 1\n", "stderr:test string 2\n"]);
    exec.write(encode("do echo $i; done\nexit 7\n"));
    expect(await exec.exited).toBe(7);
    expect(chunks.slice(2)).toEqual(["stdout:1\n", "stdout:2\n"]);
  });

  it("under a tty: a prompt, echo, backspace and ^C edit the line, ^D on an empty line ends it", async () => {
    const { exec, chunks, settle } = session(["sh"], { stdin: true, tty: true });
    await settle();
    exec.write(encode("echp\x7fo hi\r"));
    await settle();
    exec.write(encode("junk\x03"));
    await settle();
    exec.write(encode("\x04"));
    expect(await exec.exited).toBe(0);
    expect(chunks.join("").replaceAll("stdout:", "")).toBe(
      "/ # echp\b \bo hi\r\nhi\r\n/ # junk^C\r\n/ # \r\n",
    );
  });

  it("a command with input reads all of it once the client closes it", async () => {
    const { exec, chunks, settle } = session(["wc", "-l"], { stdin: true, tty: false });
    exec.write(encode("a\nb\n"));
    await settle();
    expect(chunks).toEqual([]);
    exec.write(encode("c\n"));
    exec.closeStdin();
    expect(await exec.exited).toBe(0);
    expect(chunks).toEqual(["stdout:3\n"]);
  });

  it("output written before anyone listens is kept for the first listener; kill stops a sleeping command", async () => {
    const clock = new FakeClock(0);
    const { exec, chunks } = session(
      ["sh", "-c", "echo early; sleep 60; echo late"],
      { stdin: false, tty: false },
      clock,
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(chunks).toEqual(["stdout:early\n"]);
    exec.kill();
    expect(await exec.exited).toBe(137);
    await clock.advance(60_000);
    expect(chunks).toEqual(["stdout:early\n"]);
  });
});
