// Cron schedules as kube-controller-manager reads them (robfig/cron's
// standard parser): five fields — minute, hour, day of month, month, day of
// week — with `*`, `?`, lists, ranges, steps and month/day names, or a
// descriptor (@yearly, @annually, @monthly, @weekly, @daily, @midnight,
// @hourly). When both day fields are restricted a day matches either, as in
// cron. Times are computed in the CronJob's time zone (IANA), UTC by default.

/** A schedule that does not parse: the message upstream puts in its UnparseableSchedule event. */
export class CronScheduleError extends Error {}

interface Field {
  min: number;
  max: number;
  names?: readonly string[];
}

const fields: readonly Field[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  {
    min: 1,
    max: 12,
    names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  },
  { min: 0, max: 6, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] },
];

const descriptors: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** A parsed schedule: `next(t)` is the first activation strictly after instant `t` (ms). */
export class CronSchedule {
  readonly #sets: readonly Set<number>[];
  /** Day of month or day of week was `*` or `?` (then both must match; else either). */
  readonly #domStar: boolean;
  readonly #dowStar: boolean;
  readonly #zone: string;

  private constructor(sets: Set<number>[], domStar: boolean, dowStar: boolean, zone: string) {
    this.#sets = sets;
    this.#domStar = domStar;
    this.#dowStar = dowStar;
    this.#zone = zone;
  }

  /** Parses `spec`; `timeZone` is an IANA name (default UTC). Throws a CronScheduleError. */
  static parse(spec: string, timeZone = "UTC"): CronSchedule {
    if (!isValidTimeZone(timeZone)) throw new CronScheduleError(`unknown time zone ${timeZone}`);
    const text = spec.trim();
    if (text === "") throw new CronScheduleError("empty spec string");
    if (text.startsWith("@every")) throw new CronScheduleError(`unrecognized descriptor: ${text}`);
    const expanded = text.startsWith("@") ? descriptors[text.toLowerCase()] : text;
    if (expanded === undefined) throw new CronScheduleError(`unrecognized descriptor: ${text}`);
    const parts = expanded.split(/\s+/);
    if (parts.length !== 5)
      throw new CronScheduleError(`expected exactly 5 fields, found ${parts.length}: [${parts.join(" ")}]`);
    const sets = parts.map((part, i) => parseField(part, fields[i] as Field));
    // Day of week 7 is Sunday too.
    if ((sets[4] as Set<number>).delete(7)) (sets[4] as Set<number>).add(0);
    // As robfig/cron: `*` and `?` (and `*/1`) leave the field unrestricted; `*/5` restricts it.
    const star = (part: string) => part === "*" || part === "?" || part === "*/1" || part === "?/1";
    return new CronSchedule(sets, star(parts[2] as string), star(parts[4] as string), timeZone);
  }

  /** The first activation strictly after `after` (ms since the epoch); undefined if none within five years. */
  next(after: number): number | undefined {
    // Wall-clock fields in the zone, walked as robfig/cron walks them.
    let wall = new Date(toWall(Math.floor(after / 60_000) * 60_000 + 60_000, this.#zone));
    const limit = wall.getUTCFullYear() + 5;
    const [minutes, hours, , months] = this.#sets as [Set<number>, Set<number>, Set<number>, Set<number>];
    while (wall.getUTCFullYear() <= limit) {
      if (!months.has(wall.getUTCMonth() + 1)) {
        wall = new Date(Date.UTC(wall.getUTCFullYear(), wall.getUTCMonth() + 1, 1));
        continue;
      }
      if (!this.#dayMatches(wall)) {
        wall = new Date(Date.UTC(wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate() + 1));
        continue;
      }
      if (!hours.has(wall.getUTCHours())) {
        wall = new Date(
          Date.UTC(wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate(), wall.getUTCHours() + 1),
        );
        continue;
      }
      if (!minutes.has(wall.getUTCMinutes())) {
        wall = new Date(wall.getTime() + 60_000);
        continue;
      }
      const instant = fromWall(wall.getTime(), this.#zone);
      // A wall time skipped by a DST change maps back before `after`: keep walking.
      if (instant > after) return instant;
      wall = new Date(wall.getTime() + 60_000);
    }
    return undefined;
  }

  #dayMatches(wall: Date): boolean {
    const dom = (this.#sets[2] as Set<number>).has(wall.getUTCDate());
    const dow = (this.#sets[4] as Set<number>).has(wall.getUTCDay());
    return this.#domStar || this.#dowStar ? dom && dow : dom || dow;
  }
}

function parseField(text: string, field: Field): Set<number> {
  const values = new Set<number>();
  for (const range of text.split(",")) {
    const [span = "", stepText] = range.split("/");
    let [low, high] = [field.min, field.max];
    if (span !== "*" && span !== "?") {
      const [from = "", to] = span.split("-");
      low = value(from, field);
      high = to === undefined ? (stepText === undefined ? low : field.max) : value(to, field);
    }
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step <= 0 || (stepText !== undefined && !/^\d+$/.test(stepText)))
      throw new CronScheduleError(
        `failed to parse int from ${stepText}: strconv.Atoi: parsing "${stepText}": invalid syntax`,
      );
    if (low < field.min)
      throw new CronScheduleError(`beginning of range (${low}) below minimum (${field.min}): ${range}`);
    if (high > field.max + (field.max === 6 ? 1 : 0))
      throw new CronScheduleError(`end of range (${high}) above maximum (${field.max}): ${range}`);
    if (low > high)
      throw new CronScheduleError(`beginning of range (${low}) beyond end of range (${high}): ${range}`);
    for (let v = low; v <= high; v += step) values.add(v);
  }
  return values;
}

function value(text: string, field: Field): number {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named !== -1) return named + field.min;
  if (!/^\d+$/.test(text))
    throw new CronScheduleError(
      `failed to parse int from ${text}: strconv.Atoi: parsing "${text}": invalid syntax`,
    );
  return Number(text);
}

export function isValidTimeZone(zone: string): boolean {
  if (validZones.has(zone)) return true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
  } catch {
    return false;
  }
  // Bounded by the time zone database: only names it knows get here.
  validZones.add(zone);
  return true;
}

/** Zones already found valid: building a formatter to check costs ~0.1 ms, and every sync asks. */
const validZones = new Set<string>(["UTC"]);

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `instant`, in ms. */
function offsetAt(instant: number, zone: string): number {
  if (zone === "UTC" || zone === "Etc/UTC") return 0;
  let format = formatters.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, format);
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(instant)) parts[part.type] = Number(part.value);
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(instant / 1000) * 1000;
}

/** The instant as wall-clock time in the zone, encoded as a UTC timestamp. */
function toWall(instant: number, zone: string): number {
  return instant + offsetAt(instant, zone);
}

/**
 * The instant a wall-clock time in the zone stands for: the earlier one when
 * the clock repeats it; for a time the clock skips (a DST gap) the offset
 * from before the change applies, as Go's time.Date does (02:30 becomes 03:30).
 */
function fromWall(wall: number, zone: string): number {
  const before = wall - offsetAt(wall - 43_200_000, zone);
  if (toWall(before, zone) === wall) return before;
  const after = wall - offsetAt(wall + 43_200_000, zone);
  if (toWall(after, zone) === wall) return after;
  return before;
}

/** An instant as RFC 3339 in the zone (`2026-01-01T09:00:00+09:00`, or `…Z` for UTC). */
export function formatInZone(instant: number, zone: string): string {
  const offset = offsetAt(instant, zone);
  const wall = new Date(instant + offset).toISOString().slice(0, 19);
  if (offset === 0) return `${wall}Z`;
  const minutes = Math.abs(offset) / 60_000;
  const sign = offset < 0 ? "-" : "+";
  return `${wall}${sign}${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
}
