import { describe, expect, it } from "vitest";
import { jsonLogger } from "./json-logger.js";

describe("jsonLogger", () => {
  it("writes pino's line shape with bindings, child bindings and errors as text, dropping levels below the threshold", () => {
    const lines: string[] = [];
    const logger = jsonLogger({
      write: (line) => lines.push(line),
      now: () => 1000,
      bindings: { component: "cm" },
    });
    logger.debug({ x: 1 }, "dropped");
    logger
      .child({ controller: "replicaset" })
      .info({ namespace: "default", name: "web" }, "Caches are synced");
    logger.error({ err: new TypeError("boom") });
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        level: 30,
        time: 1000,
        component: "cm",
        controller: "replicaset",
        namespace: "default",
        name: "web",
        msg: "Caches are synced",
      },
      { level: 50, time: 1000, component: "cm", err: { type: "TypeError", message: "boom" } },
    ]);
    expect(lines.every((line) => line.endsWith("}\n"))).toBe(true);
  });
});
