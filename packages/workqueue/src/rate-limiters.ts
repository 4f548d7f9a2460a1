import { type Clock, realClock } from "./clock.js";
import { TokenBucket } from "./token-bucket.js";

/**
 * Decides how long an item waits before it is retried (client-go's
 * `RateLimiter`). All durations are in milliseconds.
 */
export interface RateLimiter<T> {
  /** Records a failure of `item` and returns how long it should wait, in ms. */
  when(item: T): number;
  /** Stops tracking `item` (it succeeded or was given up on): its next delay starts over. */
  forget(item: T): void;
  /** How many failures of `item` are being tracked. */
  numRequeues(item: T): number;
}

/** Options of {@link ItemExponentialFailureRateLimiter}. */
export interface ItemExponentialFailureRateLimiterOptions {
  /** Delay after the first failure, in ms. Doubles with every further failure. Required. */
  baseDelayMs: number;
  /** Upper bound of the delay, in ms. Required. */
  maxDelayMs: number;
}

/** @deprecated The option names before they said their unit: use `baseDelayMs` and `maxDelayMs`. */
export interface LegacyItemExponentialFailureRateLimiterOptions {
  /** @deprecated Use `baseDelayMs`. */
  baseDelay: number;
  /** @deprecated Use `maxDelayMs`. */
  maxDelay: number;
}

/**
 * Per-item exponential backoff: `baseDelayMs * 2^failures`, capped at
 * `maxDelayMs`. Items back off independently; `forget` starts an item over.
 * Every failing item is remembered until it is forgotten.
 */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  readonly #failures = new Map<T, number>();
  readonly #baseDelay: number;
  readonly #maxDelay: number;

  constructor(
    options: ItemExponentialFailureRateLimiterOptions | LegacyItemExponentialFailureRateLimiterOptions,
  ) {
    const where = "ItemExponentialFailureRateLimiter";
    checkOptions(options, where);
    this.#baseDelay = durationOption(options, where, "baseDelayMs", "baseDelay");
    this.#maxDelay = durationOption(options, where, "maxDelayMs", "maxDelay");
  }

  when(item: T): number {
    const exponent = this.#failures.get(item) ?? 0;
    this.#failures.set(item, exponent + 1);
    // 2^1024 is Infinity in float64 (and 0 × Infinity is NaN), so the exponent is capped
    // well before that; the cap below then applies as client-go's overflow check does.
    const backoff = this.#baseDelay * 2 ** (exponent < 1023 ? exponent : 1023);
    return backoff > this.#maxDelay ? this.#maxDelay : backoff;
  }

  forget(item: T): void {
    this.#failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.#failures.get(item) ?? 0;
  }
}

/** Options of {@link BucketRateLimiter}. */
export interface BucketRateLimiterOptions {
  /** Tokens added per second (the overall rate). `Infinity` never delays. */
  qps: number;
  /** Bucket size: how many calls may pass at once before delays start. */
  burst: number;
  /** Source of time for the refill. Default: `realClock`. */
  clock?: Clock | undefined;
}

/**
 * An overall token bucket shared by all items (client-go's
 * `BucketRateLimiter` over `x/time/rate`): the bucket starts full with
 * `burst` tokens and refills at `qps` per second. Every call takes a token,
 * even when it has to wait for it (a reservation), so debt accumulates:
 * at 10 qps with an empty bucket the next calls wait 100 ms, 200 ms, 300 ms, ...
 */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  readonly #bucket: TokenBucket;

  constructor(options: BucketRateLimiterOptions) {
    const where = "BucketRateLimiter";
    checkOptions(options, where);
    const { qps, burst, clock = realClock } = options;
    if (typeof qps !== "number" || !(qps > 0)) {
      throw new RangeError(`${where}: qps must be a positive number, got ${String(qps)}`);
    }
    if (!Number.isInteger(burst) || burst < 1) {
      throw new RangeError(`${where}: burst must be a positive integer, got ${String(burst)}`);
    }
    this.#bucket = new TokenBucket({ qps, burst, clock });
  }

  when(_item: T): number {
    return this.#bucket.reserve();
  }

  /** No-op: the bucket tracks no items. */
  forget(_item: T): void {}

  /** Always 0: the bucket tracks no items. */
  numRequeues(_item: T): number {
    return 0;
  }
}

/** Options of {@link ItemFastSlowRateLimiter}. */
export interface ItemFastSlowRateLimiterOptions {
  /** Delay for the first `maxFastAttempts` failures of an item, in ms. Required. */
  fastDelayMs: number;
  /** Delay for every later failure, in ms. Required. */
  slowDelayMs: number;
  /** How many failures get `fastDelayMs`. Required. */
  maxFastAttempts: number;
}

/** @deprecated The option names before they said their unit: use `fastDelayMs` and `slowDelayMs`. */
export interface LegacyItemFastSlowRateLimiterOptions {
  /** @deprecated Use `fastDelayMs`. */
  fastDelay: number;
  /** @deprecated Use `slowDelayMs`. */
  slowDelay: number;
  maxFastAttempts: number;
}

/** Retries an item quickly a few times, then slowly (client-go's `ItemFastSlowRateLimiter`). */
export class ItemFastSlowRateLimiter<T> implements RateLimiter<T> {
  readonly #failures = new Map<T, number>();
  readonly #fastDelay: number;
  readonly #slowDelay: number;
  readonly #maxFastAttempts: number;

  constructor(options: ItemFastSlowRateLimiterOptions | LegacyItemFastSlowRateLimiterOptions) {
    const where = "ItemFastSlowRateLimiter";
    checkOptions(options, where);
    this.#fastDelay = durationOption(options, where, "fastDelayMs", "fastDelay");
    this.#slowDelay = durationOption(options, where, "slowDelayMs", "slowDelay");
    const { maxFastAttempts } = options;
    if (!Number.isInteger(maxFastAttempts) || maxFastAttempts < 0) {
      throw new RangeError(
        `${where}: maxFastAttempts must be a non-negative integer, got ${String(maxFastAttempts)}`,
      );
    }
    this.#maxFastAttempts = maxFastAttempts;
  }

  when(item: T): number {
    const failures = (this.#failures.get(item) ?? 0) + 1;
    this.#failures.set(item, failures);
    return failures <= this.#maxFastAttempts ? this.#fastDelay : this.#slowDelay;
  }

  forget(item: T): void {
    this.#failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.#failures.get(item) ?? 0;
  }
}

/** Options of {@link MaxOfRateLimiter}. */
export interface MaxOfRateLimiterOptions<T> {
  /** The limiters to combine; at least one. */
  limiters: readonly RateLimiter<T>[];
}

/**
 * The longest delay of several limiters (client-go's `MaxOfRateLimiter`).
 * Every limiter records every failure; `numRequeues` is the largest count and
 * `forget` reaches all of them.
 */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  readonly #limiters: readonly RateLimiter<T>[];

  constructor(options: MaxOfRateLimiterOptions<T>) {
    const where = "MaxOfRateLimiter";
    checkOptions(options, where);
    const { limiters } = options;
    if (!Array.isArray(limiters) || limiters.length === 0) {
      throw new TypeError(`${where}: limiters must be a non-empty array of rate limiters`);
    }
    limiters.forEach((limiter, index) => {
      checkLimiter(limiter, `${where}: limiters[${index}]`);
    });
    this.#limiters = [...limiters];
  }

  when(item: T): number {
    let longest = 0;
    for (const limiter of this.#limiters) {
      const delay = limiter.when(item);
      if (delay > longest) longest = delay;
    }
    return longest;
  }

  forget(item: T): void {
    for (const limiter of this.#limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    let most = 0;
    for (const limiter of this.#limiters) {
      const requeues = limiter.numRequeues(item);
      if (requeues > most) most = requeues;
    }
    return most;
  }
}

/** Options of {@link WithMaxWaitRateLimiter}. */
export interface WithMaxWaitRateLimiterOptions<T> {
  /** The limiter whose delays are capped. */
  limiter: RateLimiter<T>;
  /** Longest delay returned, in ms. Required. */
  maxDelayMs: number;
}

/** @deprecated The option names before they said their unit: use `maxDelayMs`. */
export interface LegacyWithMaxWaitRateLimiterOptions<T> {
  limiter: RateLimiter<T>;
  /** @deprecated Use `maxDelayMs`. */
  maxDelay: number;
}

/** Caps another limiter's delays (client-go's `WithMaxWaitRateLimiter`). */
export class WithMaxWaitRateLimiter<T> implements RateLimiter<T> {
  readonly #limiter: RateLimiter<T>;
  readonly #maxDelay: number;

  constructor(options: WithMaxWaitRateLimiterOptions<T> | LegacyWithMaxWaitRateLimiterOptions<T>) {
    const where = "WithMaxWaitRateLimiter";
    checkOptions(options, where);
    this.#limiter = checkLimiter(options.limiter, `${where}: limiter`);
    this.#maxDelay = durationOption(options, where, "maxDelayMs", "maxDelay");
  }

  when(item: T): number {
    const delay = this.#limiter.when(item);
    return delay > this.#maxDelay ? this.#maxDelay : delay;
  }

  forget(item: T): void {
    this.#limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.#limiter.numRequeues(item);
  }
}

/** Options of {@link defaultControllerRateLimiter}. */
export interface DefaultControllerRateLimiterOptions {
  /** Source of time for the bucket. Default: `realClock`. */
  clock?: Clock | undefined;
  /**
   * The per-item backoff's first delay, for controllers that start slower
   * (the certificate controllers' 200 ms, EndpointSlice's 1 s). Default 5 ms.
   */
  baseDelayMs?: number | undefined;
}

/**
 * client-go's `DefaultControllerRateLimiter`: the longer of a per-item
 * exponential backoff from 5 ms to 1000 s and an overall 10 qps bucket with a
 * burst of 100.
 */
export function defaultControllerRateLimiter<T>(
  options: DefaultControllerRateLimiterOptions = {},
): RateLimiter<T> {
  return new MaxOfRateLimiter<T>({
    limiters: [
      new ItemExponentialFailureRateLimiter<T>({
        baseDelayMs: options.baseDelayMs ?? 5,
        maxDelayMs: 1_000_000,
      }),
      new BucketRateLimiter<T>({ qps: 10, burst: 100, clock: options.clock }),
    ],
  });
}

function checkOptions(options: unknown, where: string): void {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${where}: options must be an object, got ${String(options)}`);
  }
}

// A duration under its `…Ms` name, or under the name it had before (deprecated; read for one release).
function durationOption(options: object, where: string, field: string, legacyField: string): number {
  const record = options as Record<string, unknown>;
  if (record[field] === undefined && record[legacyField] !== undefined) {
    return checkDuration(record[legacyField], where, legacyField);
  }
  return checkDuration(record[field], where, field);
}

function checkDuration(value: unknown, where: string, field: string): number {
  if (typeof value !== "number" || !(value >= 0) || value === Number.POSITIVE_INFINITY) {
    throw new RangeError(`${where}: ${field} must be a finite number of ms >= 0, got ${String(value)}`);
  }
  return value;
}

/** Validates a rate limiter given in options and returns it. */
export function checkLimiter<T>(limiter: RateLimiter<T>, where: string): RateLimiter<T> {
  if (
    typeof limiter !== "object" ||
    limiter === null ||
    typeof limiter.when !== "function" ||
    typeof limiter.forget !== "function" ||
    typeof limiter.numRequeues !== "function"
  ) {
    throw new TypeError(`${where} must be a RateLimiter (when, forget, numRequeues), got ${String(limiter)}`);
  }
  return limiter;
}
