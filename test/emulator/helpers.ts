/** Shared by the emulator's tests. */

/** The error a promise rejects with (code and message, as Microsoft's library raises it); fails the test when it resolves. */
export async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; message: string };
  }
  throw new Error("expected a failure");
}
