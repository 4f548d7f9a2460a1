/** What {@link QueueInterface.get} resolves to: the next item, or the news that the queue has shut down. */
export type GetResult<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

/**
 * What a consumer of a work queue needs (client-go's `workqueue.TypedInterface`):
 * depend on this rather than on the {@link Queue} class, so a test can pass a
 * fake and a wrapper can stand in. `Queue` implements it.
 */
export interface QueueInterface<T> {
  add(item: T): void;
  len(): number;
  get(): Promise<GetResult<T>>;
  done(item: T): void;
  shutDown(): void;
  shutDownWithDrain(): Promise<void>;
  shuttingDown(): boolean;
}

/** A queue that can also add an item later (client-go's `TypedDelayingInterface`). `DelayingQueue` implements it. */
export interface DelayingInterface<T> extends QueueInterface<T> {
  /** Adds `item` once `ms` milliseconds have passed; 0 or less adds it now. */
  addAfter(item: T, ms: number): void;
}

/**
 * A queue that retries through a rate limiter (client-go's
 * `TypedRateLimitingInterface`). `RateLimitingQueue` implements it; controllers
 * should take this type in their options.
 */
export interface RateLimitingInterface<T> extends DelayingInterface<T> {
  /** Adds `item` after the rate limiter's delay for it. */
  addRateLimited(item: T): void;
  /** Stops the rate limiter tracking `item` (it succeeded, or was given up on). */
  forget(item: T): void;
  /** How many times `item` has been requeued through the rate limiter. */
  numRequeues(item: T): number;
}
