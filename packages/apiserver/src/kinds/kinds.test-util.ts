import { StatusError } from "@reconcile/api";

/** The Status a write was refused with; fails the test if the write was accepted or failed otherwise. */
export async function refusedWith(write: () => Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await write();
  } catch (error) {
    if (StatusError.isInstance(error))
      return { code: error.status.code ?? 0, message: error.status.message ?? "" };
    throw error;
  }
  throw new Error("the write was accepted");
}

/** The refusal of a write as `<code> <message>`, to compare with one string. */
export async function refusalLine(write: () => Promise<unknown>): Promise<string> {
  const { code, message } = await refusedWith(write);
  return `${code} ${message}`;
}
