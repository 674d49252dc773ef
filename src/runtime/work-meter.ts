/**
 * Work metering for native built-ins, installed by the guest prelude before model code runs.
 *
 * QuickJS polls the interrupt handler between bytecodes, so one call into a native built-in
 * runs to its end whatever the budget: `new Array(1e9).join("")` is one call and ~30 s of
 * CPU. The prelude therefore wraps the built-ins whose cost grows with their input (array
 * and typed-array iteration, string search and building, JSON.parse, collection
 * constructors) and charges that size to the cell's budget *before* the native code runs:
 * a call that cannot be paid for is refused, so it never starts.
 *
 * Rules:
 * - A unit is about one element or character touched by native code (~40 ns measured);
 *   `WORK_UNITS_PER_TICK` units cost one interrupt tick of the cell's budget.
 * - Small calls accumulate in guest memory and are sent to the host once they add up to
 *   `WORK_FLUSH_UNITS`, so metering costs one host call per tick of native work, not per call.
 * - Receivers are measured once: strings are converted once and that string is what the
 *   built-in sees; array-likes whose `length` is a getter are refused (a getter could report
 *   a small length to the meter and a huge one to the built-in). Proxies cost a tick per
 *   10k trap calls like any guest code.
 * - Not covered (documented in the README): operators and implicit conversions (BigInt
 *   arithmetic, String(bigint); `+s` or `s == n` on a megabyte string in a loop of a few thousand turns), and
 *   native loops driven by non-array iterators. Operators cannot be wrapped; the platform CPU
 *   limit is the backstop there.
 */

/** Units of native work worth one interrupt tick (~40 ns each → ~330 µs, the nominal tick). */
export const WORK_UNITS_PER_TICK = 8192;
/** Units accumulated in the guest before they are charged to the host budget. */
export const WORK_FLUSH_UNITS = WORK_UNITS_PER_TICK;

/**
 * Guest source (inside the prelude's IIFE; `g`, `hostCharge`, `call`, `isArray` and the
 * captured intrinsics are in scope). Installs the wrappers and returns nothing.
 */
export const WORK_METER_SOURCE = String.raw`
  // ---- work meter (src/runtime/work-meter.ts) ----------------------------------------------
  let owedUnits = 0;
  function charge(units) {
    if (!(units > 0)) return;
    owedUnits += units;
    if (owedUnits >= ${WORK_FLUSH_UNITS}) {
      const u = owedUnits;
      owedUnits = 0;
      hostCharge(u);
    }
  }
  const getOwnDesc = Object.getOwnPropertyDescriptor;
  const getProto = Object.getPrototypeOf;
  const MAX_LEN = 9007199254740991;
  const TypedArrayProto = getProto(Uint8Array.prototype);
  const typedLength = getOwnDesc(TypedArrayProto, "length").get;
  function isTyped(o) {
    try { call(typedLength, o); return true; } catch (e) { return false; }
  }
  // The length a native iteration will see; a getter anywhere on the chain is refused.
  function lengthOf(o) {
    if (o === null || o === undefined) return 0;
    if (typeof o === "string") return o.length;
    if (typeof o !== "object" && typeof o !== "function") return 0;
    if (isArray(o)) return o.length;
    if (isTyped(o)) return call(typedLength, o);
    for (let p = o; p !== null; p = getProto(p)) {
      const d = getOwnDesc(p, "length");
      if (d === undefined) continue;
      if (d.get !== undefined || d.set !== undefined) {
        throw new TypeErrorCtor("a built-in that iterates an array-like needs a data property length, not a getter");
      }
      break;
    }
    const raw = o.length;
    // A length object could report one value to the meter and another to the built-in.
    if (raw !== null && (typeof raw === "object" || typeof raw === "function")) {
      throw new TypeErrorCtor("a built-in that iterates an array-like needs a primitive length");
    }
    let n = NumberCtor(raw);
    if (!(n > 0)) return 0;
    return n > MAX_LEN ? MAX_LEN : n;
  }
  const reflectApply = Reflect.apply;
  const wrappers = new MapCtor(); // original -> wrapper: a built-in shared by two owners stays one function
  function wrap(owner, name, cost, stringReceiver, prepareArgs) {
    const d = getOwnDesc(owner, name);
    if (d === undefined || typeof d.value !== "function") return;
    const original = d.value;
    const known = call(mapGet, wrappers, original);
    if (known !== undefined) {
      defineProperty(owner, name, { value: known, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable });
      return;
    }
    const wrapped = {
      [name]: function () {
        let self = this;
        if (stringReceiver && typeof self !== "string") {
          if (self === null || self === undefined) return call(original, self);
          self = StringCtor(self); // converted once: the built-in sees what was measured
        }
        const args = prepareArgs === undefined ? arguments : prepareArgs(arguments);
        charge(cost(self, args));
        return reflectApply(original, self, args);
      },
    }[name];
    defineProperty(wrapped, "length", { value: original.length });
    call(mapSet, wrappers, original, wrapped);
    defineProperty(owner, name, { value: wrapped, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable });
  }
  const log2 = Math.log2;
  const floor = Math.floor;
  const isConcatSpreadable = Symbol.isConcatSpreadable;
  const byLength = function (self) { return lengthOf(self); };
  // Comparing strings costs their length: a sort of long strings is charged by a sample of them.
  function sampledStringLength(arr, n) {
    if (!isArray(arr) || n === 0) return 0;
    let total = 0;
    const step = n > 16 ? floor(n / 16) : 1;
    let seen = 0;
    for (let i = 0; i < n && seen < 16; i += step, seen++) {
      const v = arr[i];
      if (typeof v === "string") total += v.length;
    }
    return seen > 0 ? total / seen : 0;
  }
  const sortCost = function (self) {
    const n = lengthOf(self);
    const comparisons = n * (log2(n + 1) + 1);
    return comparisons * (1 + sampledStringLength(self, n) / 64);
  };
  // What concat copies: every spreadable item (an array, or an object asking to be spread) by its length.
  function spreadLength(item) {
    if (item === null || (typeof item !== "object" && typeof item !== "function")) return 1;
    const spread = item[isConcatSpreadable];
    return spread === undefined ? (isArray(item) ? lengthOf(item) : 1) : spread ? lengthOf(item) : 1;
  }
  const concatCost = function (self, args) {
    let n = spreadLength(self);
    for (let i = 0; i < args.length; i++) n += spreadLength(args[i]);
    return n;
  };
  // flat walks nested arrays down to its depth: their lengths are measured by guest code (which ticks).
  function flatCost(arr, depth) {
    const n = lengthOf(arr);
    let units = n;
    if (depth >= 1) {
      for (let i = 0; i < n; i++) {
        const el = arr[i];
        if (isArray(el)) units += flatCost(el, depth - 1);
      }
    }
    return units;
  }
  const flatDepth = function (args) { const d = args[0] === undefined ? 1 : NumberCtor(args[0]); return d > 0 ? (d > 64 ? 64 : d) : 0; };
  // An array search compares the needle with every element: a long string needle costs its length each time.
  const arraySearchCost = function (self, args) {
    const n = lengthOf(self);
    const needle = args[0];
    return typeof needle === "string" ? n + (n * needle.length) / 8 : n;
  };
  const AP = Array.prototype;
  const arrayMethods = ["join", "toString", "toLocaleString", "fill", "reverse",
    "copyWithin", "slice", "splice", "forEach", "map", "filter", "some", "every", "find",
    "findIndex", "findLast", "findLastIndex", "reduce", "reduceRight", "toReversed", "toSpliced", "with", "shift", "unshift"];
  for (let i = 0; i < arrayMethods.length; i++) wrap(AP, arrayMethods[i], byLength, false);
  wrap(AP, "sort", sortCost, false);
  wrap(AP, "toSorted", sortCost, false);
  wrap(AP, "concat", concatCost, false);
  wrap(AP, "indexOf", arraySearchCost, false);
  wrap(AP, "lastIndexOf", arraySearchCost, false);
  wrap(AP, "includes", arraySearchCost, false);
  wrap(AP, "flat", function (self, args) { return flatCost(self, flatDepth(args)); }, false);
  // flatMap's callback decides what is flattened: map first (guest callbacks tick), then charge the flattening.
  const originalMap = AP.map, originalFlat = AP.flat;
  const flatMapOriginal = getOwnDesc(AP, "flatMap").value;
  defineProperty(AP, "flatMap", {
    value: {
      flatMap: function (callback, thisArg) {
        if (typeof callback !== "function") return reflectApply(flatMapOriginal, this, arguments);
        charge(lengthOf(this));
        const mapped = reflectApply(originalMap, this, [callback, thisArg]);
        charge(flatCost(mapped, 1));
        return reflectApply(originalFlat, mapped, [1]);
      },
    }.flatMap,
    writable: true, enumerable: false, configurable: true,
  });
  defineProperty(AP.flatMap, "length", { value: 1 });
  // Iterator helpers: drop(n) steps n times inside one native call.
  const IteratorProto = getProto(getProto([][Symbol.iterator]()));
  wrap(IteratorProto, "drop", function (self, args) { const k = NumberCtor(args[0]); return k > 0 ? k : 0; }, false);
  const typedMethods = ["join", "toString", "toLocaleString", "indexOf", "lastIndexOf", "includes", "fill", "reverse",
    "toReversed", "copyWithin", "slice", "with", "forEach", "map", "filter", "some", "every", "find", "findIndex",
    "findLast", "findLastIndex", "reduce", "reduceRight"];
  for (let i = 0; i < typedMethods.length; i++) wrap(TypedArrayProto, typedMethods[i], byLength, false);
  wrap(TypedArrayProto, "sort", sortCost, false);
  wrap(TypedArrayProto, "toSorted", sortCost, false);
  wrap(TypedArrayProto, "set", function (self, args) { return lengthOf(args[0]); }, false);

  // Strings: a naive search touches up to haystack × needle characters.
  const SP = String.prototype;
  const searchCost = function (self, args) {
    const n = self.length;
    const needle = args[0];
    const m = typeof needle === "string" ? needle.length : 1;
    return n + (n * m) / 8;
  };
  // A needle object is converted once (what the built-in sees is what was measured); a RegExp
  // (or anything with the symbol a string search delegates to) goes to the regex engine, which ticks.
  const symMatch = Symbol.match, symSplit = Symbol.split, symReplace = Symbol.replace;
  function needleOnce(sym) {
    return function (args) {
      const needle = args[0];
      if (needle === null || (typeof needle !== "object" && typeof needle !== "function")) return args;
      if (needle[symMatch] !== undefined || (sym !== undefined && needle[sym] !== undefined)) return args;
      const copy = [];
      for (let i = 0; i < args.length; i++) copy.push(args[i]);
      copy[0] = StringCtor(needle);
      return copy;
    };
  }
  const searchMethods = ["indexOf", "lastIndexOf", "includes", "startsWith", "endsWith"];
  for (let i = 0; i < searchMethods.length; i++) wrap(SP, searchMethods[i], searchCost, true, needleOnce(undefined));
  wrap(SP, "split", searchCost, true, needleOnce(symSplit));
  wrap(SP, "replace", searchCost, true, needleOnce(symReplace));
  wrap(SP, "replaceAll", searchCost, true, needleOnce(symReplace));
  const byStringLength = function (self) { return self.length; };
  const stringMethods = ["normalize", "toLowerCase", "toUpperCase", "toLocaleLowerCase", "toLocaleUpperCase", "trim",
    "trimStart", "trimEnd"];
  for (let i = 0; i < stringMethods.length; i++) wrap(SP, stringMethods[i], byStringLength, true);
  wrap(SP, "localeCompare", function (self, args) { return self.length + (typeof args[0] === "string" ? args[0].length : 0); }, true);
  // A result longer than the engine's maximum string is a cheap RangeError: leave it to the built-in.
  const MAX_STRING = 1073741823;
  // Building a string of repeated content is a memory copy: ~16 characters per unit.
  const resultCost = function (len) { return len > 0 && len <= MAX_STRING ? len / 16 : 0; };
  wrap(SP, "repeat", function (self, args) { return resultCost(self.length * NumberCtor(args[0])); }, true);
  const padCost = function (self, args) { return resultCost(NumberCtor(args[0])); };
  wrap(SP, "padStart", padCost, true);
  wrap(SP, "padEnd", padCost, true);

  // JSON.parse reads its whole text; collection constructors and Array.from copy their source.
  wrap(JSON, "parse", function (self, args) { return typeof args[0] === "string" ? args[0].length : 0; }, false);
  wrap(Array, "from", function (self, args) { return lengthOf(args[0]); }, false);
  wrap(Object, "fromEntries", function (self, args) { return lengthOf(args[0]); }, false);
  const promiseStatics = ["all", "allSettled", "any", "race"];
  for (let i = 0; i < promiseStatics.length; i++) wrap(PromiseCtor, promiseStatics[i], function (self, args) { return lengthOf(args[0]); }, false);

  // BigInt to decimal text is quadratic in its size (~2.6 s near the 1 Mbit cap); hex is linear,
  // so the size is read in hex first. String(x) and template literals are not covered (README).
  const bigIntToString = BigInt.prototype.toString;
  const bigIntCost = function (self, args) {
    if (typeof self !== "bigint") return 0;
    const bits = call(bigIntToString, self < 0n ? -self : self, 16).length * 4;
    const radix = args[0] === undefined ? 10 : NumberCtor(args[0]);
    return radix === 2 || radix === 4 || radix === 8 || radix === 16 || radix === 32 ? bits / 64 : (bits / 128) * (bits / 128);
  };
  wrap(BigInt.prototype, "toString", bigIntCost, false);
  wrap(BigInt.prototype, "toLocaleString", bigIntCost, false);

  // Global string functions walk their whole argument (Number.parseInt/parseFloat are the same
  // functions, so they stay identical); a regex search at least reads its subject.
  const byFirstString = function (self, args) { return typeof args[0] === "string" ? args[0].length : 0; };
  const globalFns = ["parseInt", "parseFloat", "encodeURI", "encodeURIComponent", "decodeURI", "decodeURIComponent", "escape", "unescape", "atob", "btoa"];
  for (let i = 0; i < globalFns.length; i++) wrap(g, globalFns[i], byFirstString, false);
  wrap(NumberCtor, "parseInt", byFirstString, false);
  wrap(NumberCtor, "parseFloat", byFirstString, false);
  const subjectMethods = ["match", "matchAll", "search", "isWellFormed", "toWellFormed"];
  for (let i = 0; i < subjectMethods.length; i++) wrap(SP, subjectMethods[i], byStringLength, true);
`;
