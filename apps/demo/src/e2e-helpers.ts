// What the demo's end-to-end tests share.

/** Polls `check` every 200 ms for up to 20 s. */
export async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("condition not reached in 20 s");
}
