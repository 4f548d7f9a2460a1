import { describe, expect, it } from "vitest";
import { ReconcileError } from "./errors.js";
import {
  milliValue,
  parseQuantity,
  Quantity,
  QuantityError,
  type QuantityFormat,
  quantityValue,
} from "./quantity.js";

// apimachinery's decQuantity(i, scale, format): i × 10^scale.
const dec = (value: bigint | number, exponent: number, format: QuantityFormat) =>
  new Quantity(value, exponent, format);
const max = dec(2n ** 63n - 1n, 0, "BinarySI");

// Ported from apimachinery's TestQuantityParse (pkg/api/resource/quantity_test.go).
const parseTable: [string, Quantity][] = [
  ["0", dec(0, 0, "DecimalSI")],
  ["0n", dec(0, 0, "DecimalSI")],
  ["0u", dec(0, 0, "DecimalSI")],
  ["0m", dec(0, 0, "DecimalSI")],
  ["0Ki", dec(0, 0, "BinarySI")],
  ["0k", dec(0, 0, "DecimalSI")],
  ["0Mi", dec(0, 0, "BinarySI")],
  ["0M", dec(0, 0, "DecimalSI")],
  ["0Gi", dec(0, 0, "BinarySI")],
  ["0G", dec(0, 0, "DecimalSI")],
  ["0Ti", dec(0, 0, "BinarySI")],
  ["0T", dec(0, 0, "DecimalSI")],
  // Quantity less numbers are allowed
  ["1", dec(1, 0, "DecimalSI")],
  // Binary suffixes
  ["1Ki", dec(1024, 0, "BinarySI")],
  ["8Ki", dec(8 * 1024, 0, "BinarySI")],
  ["7Mi", dec(7 * 1024 ** 2, 0, "BinarySI")],
  ["6Gi", dec(6 * 1024 ** 3, 0, "BinarySI")],
  ["5Ti", dec(5 * 1024 ** 4, 0, "BinarySI")],
  ["4Pi", dec(4 * 1024 ** 5, 0, "BinarySI")],
  ["3Ei", dec(3n * 1024n ** 6n, 0, "BinarySI")],
  ["10Ti", dec(10 * 1024 ** 4, 0, "BinarySI")],
  ["100Ti", dec(100 * 1024 ** 4, 0, "BinarySI")],
  // Decimal suffixes
  ["5n", dec(5, -9, "DecimalSI")],
  ["4u", dec(4, -6, "DecimalSI")],
  ["3m", dec(3, -3, "DecimalSI")],
  ["9", dec(9, 0, "DecimalSI")],
  ["8k", dec(8, 3, "DecimalSI")],
  ["50k", dec(5, 4, "DecimalSI")],
  ["7M", dec(7, 6, "DecimalSI")],
  ["6G", dec(6, 9, "DecimalSI")],
  ["5T", dec(5, 12, "DecimalSI")],
  ["40T", dec(4, 13, "DecimalSI")],
  ["300T", dec(3, 14, "DecimalSI")],
  ["2P", dec(2, 15, "DecimalSI")],
  ["1E", dec(1, 18, "DecimalSI")],
  // Decimal exponents
  ["1E-3", dec(1, -3, "DecimalExponent")],
  ["1e3", dec(1, 3, "DecimalExponent")],
  ["1E6", dec(1, 6, "DecimalExponent")],
  ["1e9", dec(1, 9, "DecimalExponent")],
  ["1E12", dec(1, 12, "DecimalExponent")],
  ["1e15", dec(1, 15, "DecimalExponent")],
  ["1E18", dec(1, 18, "DecimalExponent")],
  // Nonstandard but still parsable
  ["1e14", dec(1, 14, "DecimalExponent")],
  ["1e13", dec(1, 13, "DecimalExponent")],
  ["100.035k", dec(100035, 0, "DecimalSI")],
  // Things that look like floating point
  ["0.001", dec(1, -3, "DecimalSI")],
  ["0.0005k", dec(5, -1, "DecimalSI")],
  ["0.005", dec(5, -3, "DecimalSI")],
  ["0.05", dec(5, -2, "DecimalSI")],
  ["0.5", dec(5, -1, "DecimalSI")],
  ["0.00050k", dec(5, -1, "DecimalSI")],
  ["0.00500", dec(5, -3, "DecimalSI")],
  ["0.05000", dec(5, -2, "DecimalSI")],
  ["0.50000", dec(5, -1, "DecimalSI")],
  ["0.5e0", dec(5, -1, "DecimalExponent")],
  ["0.5e-1", dec(5, -2, "DecimalExponent")],
  ["0.5e-2", dec(5, -3, "DecimalExponent")],
  ["10.035M", dec(10035, 3, "DecimalSI")],
  ["1.2e3", dec(12, 2, "DecimalExponent")],
  ["1.3E+6", dec(13, 5, "DecimalExponent")],
  ["1.40e9", dec(14, 8, "DecimalExponent")],
  ["1.53E12", dec(153, 10, "DecimalExponent")],
  ["1.6e15", dec(16, 14, "DecimalExponent")],
  ["1.7E18", dec(17, 17, "DecimalExponent")],
  ["9.01", dec(901, -2, "DecimalSI")],
  ["8.1k", dec(81, 2, "DecimalSI")],
  ["7.123456M", dec(7123456, 0, "DecimalSI")],
  ["6.987654321G", dec(6987654321, 0, "DecimalSI")],
  ["5.444T", dec(5444, 9, "DecimalSI")],
  ["40.1T", dec(401, 11, "DecimalSI")],
  ["300.2T", dec(3002, 11, "DecimalSI")],
  ["2.5P", dec(25, 14, "DecimalSI")],
  ["1.01E", dec(101, 16, "DecimalSI")],
  // Things that saturate/round
  ["3.001n", dec(4, -9, "DecimalSI")],
  ["1.1E-9", dec(2, -9, "DecimalExponent")],
  ["0.0000000001", dec(1, -9, "DecimalSI")],
  ["0.0000000005", dec(1, -9, "DecimalSI")],
  ["0.00000000050", dec(1, -9, "DecimalSI")],
  ["0.5e-9", dec(1, -9, "DecimalExponent")],
  ["0.9n", dec(1, -9, "DecimalSI")],
  ["0.00000012345", dec(124, -9, "DecimalSI")],
  ["0.00000012354", dec(124, -9, "DecimalSI")],
  ["9Ei", max],
  ["9223372036854775807Ki", max],
  ["12E", dec(12, 18, "DecimalSI")],
  // We'll accept fractional binary stuff, too.
  ["100.035Ki", dec(10243584, -2, "BinarySI")],
  ["0.5Mi", dec(0.5 * 1024 * 1024, 0, "BinarySI")],
  ["0.05Gi", dec(536870912, -1, "BinarySI")],
  ["0.025Ti", dec(274877906944, -1, "BinarySI")],
  // Things written by trolls
  ["0.000000000001Ki", dec(2, -9, "DecimalSI")], // rounds up, changes format
  [".001", dec(1, -3, "DecimalSI")],
  [".0001k", dec(100, -3, "DecimalSI")],
  ["1.", dec(1, 0, "DecimalSI")],
  ["1.G", dec(1, 9, "DecimalSI")],
];

describe("Quantity.parse (apimachinery's TestQuantityParse)", () => {
  it.each(parseTable)("parses %s to its exact amount and format", (input, expected) => {
    const got = Quantity.parse(input);
    expect(got.cmp(expected)).toBe(0);
    expect(got.format).toBe(expected.format);
  });

  it.each(parseTable)("parses -%s to the negated amount, rounding away from zero", (input, expected) => {
    const got = Quantity.parse(`-${input}`);
    expect(got.cmp(expected.neg())).toBe(0);
    expect(got.format).toBe(expected.format);
  });

  it.each(parseTable)("parses +%s as %s", (input, expected) => {
    const got = Quantity.parse(`+${input}`);
    expect(got.cmp(expected)).toBe(0);
    expect(got.format).toBe(expected.format);
  });

  it.each([
    "",
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    // trailing white space is forbidden
    " 1",
    "1 ",
  ])("rejects %j with a QuantityError", (input) => {
    expect(() => Quantity.parse(input)).toThrow(QuantityError);
  });

  it("names the grammar and the input in the error, with a stable code", () => {
    let caught: unknown;
    try {
      Quantity.parse("1+1.0M");
    } catch (error) {
      caught = error;
    }
    expect(ReconcileError.isInstance(caught)).toBe(true);
    expect((caught as QuantityError).code).toBe("api.invalid-quantity");
    expect((caught as QuantityError).message).toBe(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got "1+1.0M"`,
    );
    expect(() => Quantity.parse("5ki")).toThrow(`unable to parse quantity's suffix, got "5ki"`);
    expect(() => Quantity.parse("1e99999")).toThrow("the exponent of a quantity must be within ±1000");
  });

  it("reads a JSON number as its decimal text", () => {
    expect(Quantity.parse(0.5).toString()).toBe("500m");
    expect(Quantity.parse(3).toString()).toBe("3");
    expect(Quantity.parse(1e21).toString()).toBe("1e21");
    expect(() => Quantity.parse(Number.NaN)).toThrow("a quantity must be a finite number, got null");
  });
});

// Ported from apimachinery's TestQuantityString: the canonical form, and an alternate spelling of it.
const stringTable: [Quantity, string, string][] = [
  [dec(1024 * 1024 * 1024, 0, "BinarySI"), "1Gi", "1024Mi"],
  [dec(300 * 1024 * 1024, 0, "BinarySI"), "300Mi", "307200Ki"],
  [dec(6 * 1024, 0, "BinarySI"), "6Ki", ""],
  [dec(1001 * 1024 * 1024 * 1024, 0, "BinarySI"), "1001Gi", "1025024Mi"],
  [dec(1024 * 1024 * 1024 * 1024, 0, "BinarySI"), "1Ti", "1024Gi"],
  [dec(5, 0, "BinarySI"), "5", "5000m"],
  [dec(500, -3, "BinarySI"), "500m", "0.5"],
  [dec(1, 9, "DecimalSI"), "1G", "1000M"],
  [dec(1000, 6, "DecimalSI"), "1G", "0.001T"],
  [dec(1000000, 3, "DecimalSI"), "1G", ""],
  [dec(1000000000, 0, "DecimalSI"), "1G", ""],
  [dec(1, -3, "DecimalSI"), "1m", "1000u"],
  [dec(80, -3, "DecimalSI"), "80m", ""],
  [dec(1080, -3, "DecimalSI"), "1080m", "1.08"],
  [dec(108, -2, "DecimalSI"), "1080m", "1080000000n"],
  [dec(10800, -4, "DecimalSI"), "1080m", ""],
  [dec(300, 6, "DecimalSI"), "300M", ""],
  [dec(1, 12, "DecimalSI"), "1T", ""],
  [dec(1234567, 6, "DecimalSI"), "1234567M", ""],
  [dec(1234567, -3, "BinarySI"), "1234567m", ""],
  [dec(3, 3, "DecimalSI"), "3k", ""],
  [dec(1025, 0, "BinarySI"), "1025", ""],
  [dec(0, 0, "DecimalSI"), "0", ""],
  [dec(0, 0, "BinarySI"), "0", ""],
  [dec(1, 9, "DecimalExponent"), "1e9", ".001e12"],
  [dec(1, -3, "DecimalExponent"), "1e-3", "0.001e0"],
  [dec(1, -9, "DecimalExponent"), "1e-9", "1000e-12"],
  [dec(80, -3, "DecimalExponent"), "80e-3", ""],
  [dec(300, 6, "DecimalExponent"), "300e6", ""],
  [dec(1, 12, "DecimalExponent"), "1e12", ""],
  [dec(1, 3, "DecimalExponent"), "1e3", ""],
  [dec(3, 3, "DecimalExponent"), "3e3", ""],
  [dec(3, 3, "DecimalSI"), "3k", ""],
  [dec(0, 0, "DecimalExponent"), "0", "00"],
  [dec(1, -9, "DecimalSI"), "1n", ""],
  [dec(80, -9, "DecimalSI"), "80n", ""],
  [dec(1080, -9, "DecimalSI"), "1080n", ""],
  [dec(108, -8, "DecimalSI"), "1080n", ""],
  [dec(10800, -10, "DecimalSI"), "1080n", ""],
  [dec(1, -6, "DecimalSI"), "1u", ""],
  [dec(80, -6, "DecimalSI"), "80u", ""],
  [dec(1080, -6, "DecimalSI"), "1080u", ""],
];

describe("Quantity.toString (apimachinery's TestQuantityString)", () => {
  it.each(stringTable)("writes %s as %s, and reads that back unchanged", (quantity, canonical, alternate) => {
    expect(quantity.toString()).toBe(canonical);
    expect(Quantity.parse(canonical).toString()).toBe(canonical);
    if (alternate !== "") expect(Quantity.parse(alternate).toString()).toBe(canonical);
    if (!quantity.isZero()) expect(quantity.neg().toString()).toBe(`-${canonical}`);
  });

  it.each([
    // apimachinery's TestQuantityParseEmit
    ["1Ki", "1Ki"],
    ["1Mi", "1Mi"],
    ["1Gi", "1Gi"],
    ["1024Mi", "1Gi"],
    ["1000M", "1G"],
    [".001Ki", "1024m"],
    [".000001Ki", "1024u"],
    [".000000001Ki", "1024n"],
    [".000000000001Ki", "2n"],
  ])("parses %s and writes %s", (input, output) => {
    expect(Quantity.parse(input).toString()).toBe(output);
    expect(Quantity.parse(`-${input}`).toString()).toBe(`-${output}`);
  });

  it("writes a whole number below 1000 plainly in every format, and 1000 with its format's suffix", () => {
    for (const format of ["DecimalSI", "BinarySI", "DecimalExponent"] as const) {
      expect([0, 7, 100, 999].map((n) => new Quantity(n, 0, format).toString())).toEqual([
        "0",
        "7",
        "100",
        "999",
      ]);
      expect(new Quantity(-999, 0, format).toString()).toBe("-999");
      expect(new Quantity(1, 2, format).toString()).toBe("100");
    }
    expect(new Quantity(1000, 0, "DecimalSI").toString()).toBe("1k");
    expect(new Quantity(1000, 0, "DecimalExponent").toString()).toBe("1e3");
    expect(new Quantity(1000, 0, "BinarySI").toString()).toBe("1k");
    expect(new Quantity(1024, 0, "BinarySI").toString()).toBe("1Ki");
  });

  it("writes an amount past the E suffix as a multiple of E, and is a string in JSON", () => {
    expect(dec(1, 21, "DecimalSI").toString()).toBe("1000E");
    expect(JSON.stringify({ cpu: Quantity.parse("1.5") })).toBe('{"cpu":"1500m"}');
  });
});

describe("comparing and arithmetic", () => {
  it.each([
    // apimachinery's TestQuantityCmp
    ["0", "0", 0],
    ["100m", "50m", 1],
    ["50m", "100m", -1],
    ["10000T", "100Gi", 1],
    ["1Gi", "1073741824", 0],
    ["1k", "1000", 0],
  ] as const)("compares %s with %s as %d", (x, y, expected) => {
    expect(Quantity.parse(x).cmp(y)).toBe(expected);
    expect(Quantity.parse(x).equal(y)).toBe(expected === 0);
  });

  it.each([
    // apimachinery's TestAdd and TestSub
    [dec(10, 0, "DecimalSI"), dec(1, 1, "DecimalSI"), dec(20, 0, "DecimalSI"), dec(0, 0, "DecimalSI")],
    [dec(10, 0, "DecimalSI"), dec(1, 0, "BinarySI"), dec(11, 0, "DecimalSI"), dec(9, 0, "DecimalSI")],
    [dec(10, 0, "BinarySI"), dec(1, 0, "DecimalSI"), dec(11, 0, "BinarySI"), dec(9, 0, "BinarySI")],
    [dec(0, 0, "DecimalSI"), dec(50, 0, "DecimalSI"), dec(50, 0, "DecimalSI"), dec(-50, 0, "DecimalSI")],
    [dec(50, 0, "DecimalSI"), dec(0, 0, "DecimalSI"), dec(50, 0, "DecimalSI"), dec(50, 0, "DecimalSI")],
  ])("adds and subtracts %s and %s", (a, b, sum, difference) => {
    expect(a.add(b).cmp(sum)).toBe(0);
    expect(a.add(b).format).toBe(sum.format);
    expect(a.sub(b).cmp(difference)).toBe(0);
  });

  it("takes the other operand's format when adding to zero (TestQuantityAddZeroPreservesSuffix)", () => {
    expect(new Quantity(0).add("1Mi").toString()).toBe("1Mi");
    expect(new Quantity(0).sub("1Mi").toString()).toBe("-1Mi");
    expect(Quantity.parse("100m").add("100m").add("800m").toString()).toBe("1");
  });

  it("negates keeping the format (TestNeg)", () => {
    expect(
      dec(10, 0, "BinarySI")
        .neg()
        .cmp(dec(-10, 0, "BinarySI")),
    ).toBe(0);
    expect(dec(-10, 0, "BinarySI").neg().format).toBe("BinarySI");
    expect(dec(0, 0, "DecimalSI").neg().toString()).toBe("0");
  });
});

describe("values", () => {
  it.each([
    // apimachinery's TestScaledValue: NewScaledQuantity(1, from).ScaledValue(to)
    [-9, -9, 1],
    [-9, -6, 1],
    [-9, -3, 1],
    [-9, 0, 1],
    [-6, -9, 1000],
    [-6, -6, 1],
    [-6, -3, 1],
    [-6, 0, 1],
    [-3, -9, 1000 * 1000],
    [-3, -6, 1000],
    [-3, -3, 1],
    [-3, 0, 1],
    [0, -9, 1000 * 1000 * 1000],
    [0, -6, 1000 * 1000],
    [0, -3, 1000],
    [0, 0, 1],
    [2, -2, 100 * 100],
  ])("1e%d in units of 1e%d is %d, rounded up", (from, to, expected) => {
    expect(new Quantity(1, from).scaledValue(to)).toBe(expected);
  });

  it.each([
    ["100m", 100, 1],
    ["1.5", 1500, 2],
    ["500Mi", 524288000000, 524288000],
    ["1k", 1000000, 1000],
    ["0.1", 100, 1],
    ["1n", 1, 1],
    ["-1.5", -1500, -1],
    ["-100m", -100, 0],
  ] as const)("%s has milliValue %d and value %d (rounded towards +∞)", (input, milli, whole) => {
    expect(milliValue(input)).toBe(milli);
    expect(quantityValue(input)).toBe(whole);
  });

  it("approximates as a float (TestQuantityAsApproximateFloat64)", () => {
    expect(dec(7 * 1024 * 1024, -1, "BinarySI").asApproximateFloat64()).toBe(734003.2);
    expect(dec(7 * 1024 * 1024, 8, "DecimalSI").asApproximateFloat64()).toBe(7 * 1024 * 1024 * 1e8);
    expect(Quantity.parse("1.5Gi").asApproximateFloat64()).toBe(1610612736);
    expect(Quantity.parse("100m").asApproximateFloat64()).toBe(0.1);
  });

  it("parseQuantity returns a Quantity as it is and parses anything else", () => {
    const quantity = Quantity.parse("2Gi");
    expect(parseQuantity(quantity)).toBe(quantity);
    expect(parseQuantity("2Gi").equal(quantity)).toBe(true);
  });

  it("rejects a constructor value or exponent that is not an integer", () => {
    expect(() => new Quantity(1.5)).toThrow("Quantity: value must be an integer, got 1.5");
    expect(() => new Quantity(1, 0.5)).toThrow("Quantity: exponent must be an integer, got 0.5");
  });
});
