/** Shared by the two-client tests (issue #26). */

/** Runs the promises while advancing jest's fake clock in small steps (the lock waits on timers). */
export async function drive<T>(promises: Array<Promise<T>>): Promise<Array<PromiseSettledResult<T>>> {
  let done = false;
  const all = Promise.allSettled(promises).then((r) => {
    done = true;
    return r;
  });
  for (let i = 0; i < 10_000 && !done; i++) await jest.advanceTimersByTimeAsync(50);
  return all;
}
