import { FakeClock } from "@reconcile/clock";
import { describe, expect, it } from "vitest";
import { NodeFilesystem } from "../../node-filesystem.js";
import { runProcess } from "../container-process.js";

const spec = { image: "docker.io/library/busybox:latest", hostname: "box", env: [] };

function container() {
  const files = new NodeFilesystem();
  const readOnly = new NodeFilesystem();
  readOnly.mkdir("/");
  return {
    files,
    host: {
      clock: new FakeClock(0),
      hostname: "box",
      resolve: (path: string) =>
        path.startsWith("/etc/config")
          ? { filesystem: readOnly, path: path.slice("/etc/config".length) || "/", readOnly: true }
          : { filesystem: files, path, readOnly: false },
    },
  };
}

/** Runs `argv` with `stdin` bytes; returns its exit code, binary stdout and text stderr. */
async function run(
  host: ReturnType<typeof container>["host"],
  argv: string[],
  stdin: Uint8Array = new Uint8Array(),
) {
  const out: Uint8Array[] = [];
  let err = "";
  const code = await runProcess(
    argv,
    spec,
    host,
    (stream, text) => {
      if (stream === "stderr") err += text;
      else out.push(new TextEncoder().encode(text));
    },
    new TextDecoder().decode(stdin),
    { stdin, write: (data) => out.push(data) },
  );
  return { code, out: Buffer.concat(out), err };
}

describe("tar in the simulated containers", () => {
  it("archives files and directories (ustar, leading / stripped) and extracts them elsewhere, bytes intact", async () => {
    const source = container();
    const binary = new Uint8Array([0, 1, 2, 250, 255, 10, 13]);
    source.files.writeFile("/data/a.txt", "alpha\n");
    source.files.writeFile("/data/sub/b.bin", binary);
    source.files.writeFile(`/data/${"long-name-".repeat(12)}.txt`, "long\n");
    const created = await run(source.host, ["tar", "cf", "-", "/data"]);
    expect(created.code).toBe(0);
    expect(created.err).toBe("tar: removing leading '/' from member names\n");
    expect(created.out.length % 512).toBe(0);
    expect(created.out.subarray(257, 262).toString()).toBe("ustar");

    const listed = await run(source.host, ["tar", "tf", "-"], created.out);
    expect(listed.out.toString().split("\n").filter(Boolean).sort()).toEqual(
      ["data/", "data/a.txt", `data/${"long-name-".repeat(12)}.txt`, "data/sub/", "data/sub/b.bin"].sort(),
    );

    const target = container();
    target.files.mkdir("/restore");
    const extracted = await run(
      target.host,
      ["tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-", "-C", "/restore"],
      created.out,
    );
    expect(extracted).toMatchObject({ code: 0, err: "" });
    expect(new TextDecoder().decode(target.files.readFile("/restore/data/a.txt"))).toBe("alpha\n");
    expect([...target.files.readFile("/restore/data/sub/b.bin")!]).toEqual([...binary]);
    expect(target.files.readFile(`/restore/data/${"long-name-".repeat(12)}.txt`)).toBeDefined();
  });

  it("reads a PAX long name, refuses '..', a read-only mount and compression, and names a missing path", async () => {
    const box = container();
    const name = `${"x".repeat(120)}.txt`;
    const pax = paxArchive(name, "content");
    expect((await run(box.host, ["tar", "-xf", "-", "-C", "/"], pax)).code).toBe(0);
    expect(new TextDecoder().decode(box.files.readFile(`/${name}`))).toBe("content");
    expect((await run(box.host, ["tar", "xf", "-", "-C", "/etc/config"], paxArchive("f", "x"))).err).toBe(
      "tar: can't open 'f': Read-only file system\n",
    );
    expect((await run(box.host, ["tar", "xf", "-"], paxArchive("../escape", "x"))).err).toBe(
      "tar: skipping '../escape': a path with '..' leaves the target directory\n",
    );
    expect(box.files.exists("/escape")).toBe(false);
    expect((await run(box.host, ["tar", "czf", "-", "/x"])).err).toBe(
      "tar: compressed archives are not supported here\n",
    );
    expect(await run(box.host, ["tar", "cf", "-", "/nope"])).toMatchObject({
      code: 1,
      err: "tar: removing leading '/' from member names\ntar: nope: No such file or directory\n",
    });
  });
});

/** An archive as Go's archive/tar writes a long name: a PAX header, then the file. */
function paxArchive(name: string, content: string): Uint8Array {
  const record = (text: string) => {
    let length = text.length + 3;
    while (`${length} ${text}\n`.length !== length) length = `${length} ${text}\n`.length;
    return `${length} ${text}\n`;
  };
  const paxBody = new TextEncoder().encode(record(`path=${name}`));
  const data = new TextEncoder().encode(content);
  const pad = (n: number) => new Uint8Array((512 - (n % 512)) % 512);
  return Buffer.concat([
    ustar("PaxHeaders/x", paxBody.length, "x"),
    paxBody,
    pad(paxBody.length),
    ustar(name.slice(0, 99), data.length, "0"),
    data,
    pad(data.length),
    new Uint8Array(1024),
  ]);
}

function ustar(name: string, size: number, type: string): Uint8Array {
  const head = new Uint8Array(512);
  const put = (offset: number, text: string) => head.set(new TextEncoder().encode(text), offset);
  put(0, name);
  put(100, "0000644\0");
  put(124, `${size.toString(8).padStart(11, "0")}\0`);
  put(156, type);
  put(257, "ustar\0");
  put(263, "00");
  head.fill(0x20, 148, 156);
  const sum = head.reduce((total, byte) => total + byte, 0);
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  return head;
}
