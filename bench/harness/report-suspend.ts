/**
 * Report, section 4: suspension — `wait` latency over HTTP and in-isolate park/resume phases
 * (production codec against the old full-gzip format), stored bytes per parked cell, and 64
 * cells parked then resumed in one session. Pure.
 */
import type { SuspendHttpFigures, SuspendIsolateFigures, WorkerStats } from "./measure-suspend.ts";
import { factor, kib, ms, msSpread, ratio, speed, table, timingCells, x, xRange } from "./report-format.ts";
import { invert, type Summary } from "./stats.ts";

const faster = (mine: number, old: number) => (mine <= old ? `${ratio(old, mine)} faster` : `${ratio(mine, old)} slower`);

/** "5.2× faster (IQR 4.9–5.6)" from a per-batch old/production ratio (above 1: production faster). */
function codecSpeed(oldOverNew: Summary | null): string {
  return oldOverNew === null ? "— (below the clock's resolution)" : speed(invert(oldOverNew));
}

export function reportSuspension(h: SuspendHttpFigures, w: SuspendIsolateFigures): string[] {
  const p = h.plan;
  const L: string[] = [];
  L.push("## 4. Suspension: park and resume (issue 3)", "", "### 4.1 `wait` latency", "");
  L.push(
    `Over HTTP, on the server of 1. (production build, default config), one session and turn: \`exec\` of \`${p.parkCode}\``,
    'parks at once (`{status: "waiting", reason: "yield", runId}`: VM snapshot, `encodeSnapshot`, SQLite write), then `POST …/tools/wait`',
    "with `{runId}` resumes it (SQLite read, `decodeSnapshot`, restore, deliver the yield, run to completion, rows deleted) and must return `value: 2`.",
    `Baseline: \`exec\` of \`${p.noParkCode}\`, a cell that never parks. The refused \`wait\` (\`{}\`) is the floor under a \`wait\`: HTTP →`,
    `Worker → Durable Object → turn lookup, no run. ${p.warmup} warm-up cycles, then ${p.rounds} rounds of ${p.perRound} cycles of (exec \`${p.noParkCode}\`, park, wait,`,
    "refused wait), sequential, every reply checked. Ratios and differences are per round (medians of the round), summarized across rounds.",
    "",
  );
  const m = h.measures;
  const row = (name: string, s: Summary, vs: string): string[] => [name, String(s.n), ...timingCells(s), vs];
  L.push(
    ...table(
      ["measure", "n", "median (ms)", "IQR (ms)", "p90 (ms)", "min (ms)", "max (ms)", `ratio vs \`exec\` \`${p.noParkCode}\` (per round)`],
      [
        row(`**baseline**: \`exec\` \`${p.noParkCode}\` (never parks)`, m.noPark, "1×"),
        row("`exec` that parks (→ `waiting`)", m.park, factor(h.ratios.park)),
        row("`wait` → `completed` (restore + deliver + complete)", m.wait, factor(h.ratios.wait)),
        row("refused `wait` `{}` (floor: HTTP + Worker + Durable Object, no run)", m.refused, factor(h.ratios.refused)),
      ],
    ),
    "",
    `Inside the session object, by difference of per-round medians: \`wait\` ≈ ${msSpread(h.waitInObject)} (wait − refused wait); parking ≈`,
    `${msSpread(h.parkInObject)} more than a cell that completes (park − exec \`${p.noParkCode}\`).`,
    "",
  );

  const s = w.suspend;
  const ph = w.phases;
  const cw = s.codecWarmup;
  L.push(
    "In-isolate, in the bench worker (bench/bench-suspend.ts): the same cell in a GuestVm with the demo tools installed, parked and",
    "resumed as RunLifecycle does, minus SQLite and the Durable Object, with the production codec (src/snapshot-store/snapshot-codec.ts):",
    "park = `vm.snapshot()` + `rawSnapshotBytes` (the limit check) + `encodeSnapshot` (the 4 KiB pages that differ from the pristine image of",
    "src/snapshot-store/pristine-image.ts, XOR-ed against it, gzip); resume = `decodeSnapshot` (gunzip, XOR back onto the image) +",
    "`GuestVm.restore(snapshot, controlToken, limits, guard, host, abi)` + deliver the yield. **Baseline format**: the previous storage format,",
    "QuickJS's whole-memory `serializeSnapshot` + `compress` (gzip) / `decompress` + `deserializeSnapshot`, on the same snapshots in the same",
    `batches. ${s.iterations} cells in ${s.batches} batches of ${s.batchSize} after ${p.warmupIterations} warm-up; phases timed per batch and divided by the batch size`,
    "(1 ms clock); park / resume totals are timed one cell at a time, both formats on the same parked cell, the format that goes first",
    "alternating. Baseline for the ratio column: the exec path of a cell that never parks, in the same worker and the same batch",
    "(GuestVm.create + prelude + tools + run `return 2` + dispose); ratios are per batch, summarized across batches.",
    "",
    "**One-time codec cost** (per isolate; measured once, before everything else, and excluded from all figures below): building the pristine",
    `image (a deterministic VM prepared like a cell's, ${kib(cw.imageBytes)} KiB of memory) and the engine image (a bare VM: the engine id and the`,
    "self-contained base), both awaited by the first `encodeSnapshot` or `decodeSnapshot`, took",
    `**${ms(cw.imageBuildMs)} ms**; then the first \`encodeSnapshot\` of a small cell took ${ms(cw.firstEncodeMs)} ms and the first \`decodeSnapshot\` ${ms(cw.firstDecodeMs)} ms, against`,
    `${ms(cw.warmEncodeMs)} / ${ms(cw.warmDecodeMs)} ms warm (mean of ${cw.warmReps}). Single measurements on a 1 ms clock. The first park or resume in each isolate of the`,
    "production worker pays this (in 4.1 the warm-up cycles absorb it).",
    "",
  );
  const prow = (name: string, key: string, isBase = false): string[] => {
    const st = ph[key]!;
    return [
      name,
      ms(st.median),
      `${ms(st.q1)}–${ms(st.q3)}`,
      ms(st.p90),
      ms(st.min),
      ms(st.max),
      isBase ? "1×" : st.median === 0 ? "—" : factor(w.vsExec[key] ?? null),
    ];
  };
  L.push(
    ...table(
      ["phase", "median (ms)", "IQR (ms)", "p90 (ms)", "min (ms)", "max (ms)", "ratio vs baseline (per batch)"],
      [
        prow("**baseline**: create + prelude + tools + run `return 2` + dispose", "execNoPark", true),
        prow("exec up to the park point: create + prelude + tools + run to `yield_control`", "runToYield"),
        prow("park: `vm.snapshot()` (memory copy)", "snapshot"),
        prow("park: `encodeSnapshot` (page delta vs the pristine image, XOR, gzip)", "encode"),
        prow("**park total** (snapshot + limit check + `encodeSnapshot`), one at a time", "parkSequential"),
        prow("resume: `decodeSnapshot` (gunzip, XOR onto the image)", "decode"),
        prow("resume: `GuestVm.restore`", "restore"),
        prow("resume: deliver the yield (`vm.settle`) + status + value", "deliverComplete"),
        prow("**resume total** (decode + restore + deliver + complete), one at a time", "resumeSequential"),
        prow("old format: `serializeSnapshot` (after the same `vm.snapshot()`)", "fullSerialize"),
        prow("old format: `compress` (gzip of the whole memory)", "fullCompress"),
        prow("old format: **park total** (snapshot + serialize + compress), one at a time", "fullParkSequential"),
        prow("old format: `decompress` (gunzip)", "fullDecompress"),
        prow("old format: `deserializeSnapshot`", "fullDeserialize"),
        prow("old format: `GuestVm.restore`", "fullRestore"),
        prow("old format: deliver the yield + status + value", "fullDeliverComplete"),
        prow("old format: **resume total** (decompress + deserialize + restore + deliver + complete), one at a time", "fullResumeSequential"),
      ],
    ),
    "",
  );
  const b = s.bytes;
  const med = (k: string) => ph[k]!.median;
  L.push(
    "Production codec against the old full-gzip format, small cell, same run (medians; the last column is the per-batch ratio, median and",
    "IQR across batches):",
    "",
    ...table(
      ["measure", "production codec", "**baseline**: old full-gzip format", "production vs baseline"],
      [
        ["park total, one at a time (ms)", ms(med("parkSequential")), ms(med("fullParkSequential")), codecSpeed(w.codec.park)],
        ["resume total, one at a time (ms)", ms(med("resumeSequential")), ms(med("fullResumeSequential")), codecSpeed(w.codec.resume)],
        ["encode / serialize + compress (ms)", ms(med("encode")), ms(med("fullSerialize") + med("fullCompress")), codecSpeed(w.codec.encode)],
        ["decode / decompress + deserialize (ms)", ms(med("decode")), ms(med("fullDecompress") + med("fullDeserialize")), codecSpeed(w.codec.decode)],
        [
          "stored bytes (KiB)",
          kib(b.stored.median),
          kib(b.fullStored.median),
          `${ratio(b.fullStored.median, b.stored.median)} smaller (${(b.stored.median / b.fullStored.median).toFixed(3)}×)`,
        ],
      ],
    ),
    "",
    `Parking is mostly \`encodeSnapshot\` (${ms(med("encode"))} ms per cell in batches; park total ${ms(med("parkSequential"))} ms), as it was mostly \`compress\` in the old format ` +
      `(${ms(med("fullCompress"))} ms; park total ${ms(med("fullParkSequential"))} ms): ` +
      `only ${b.changedPages.median} of ${b.pages.median} pages differ from the image, so gzip sees ${kib(b.changedPages.median * 4096)} KiB instead of ${kib(b.fullRaw.median)} KiB. ` +
      `A resume is \`decodeSnapshot\` ${ms(med("decode"))} ms + \`GuestVm.restore\` ${ms(med("restore"))} ms + delivery ${ms(med("deliverComplete"))} ms.`,
    `The VM work of a resume is ${ms(med("resumeSequential"))} ms of the ≈ ${ms(h.waitInObject.median)} ms a \`wait\` costs in the session object (4.1), and the VM work of a park`,
    `${ms(med("parkSequential"))} ms of ≈ ${ms(h.parkInObject.median)} ms. The remainder is the Durable Object's share (run state and snapshot chunk reads, bridge`,
    "setup, the SQLite writes or deletes, the alarm, and the output gate holding the reply until those writes are durable); it is not",
    "broken down here: that needs timing inside src/.",
    "",
  );
  L.push(...reportSizes(w, p.parkCode));
  L.push(...reportThroughput(h, w));
  return L;
}

function reportSizes(w: SuspendIsolateFigures, parkCode: string): string[] {
  const z = w.sizes;
  const names: Record<string, string> = {
    small: `small: \`${parkCode}\``,
    repeated1MB: "1 MiB string: `globalThis.d = 'x'.repeat(1<<20)`",
    random1MB: "1 MiB of random-ish strings: 65,536 × 16 pseudo-random base-36 chars in an array",
  };
  const cells = Object.entries(z.cells);
  const L: string[] = [];
  L.push("### 4.2 Stored bytes per parked cell", "");
  L.push(
    "Measured in the bench worker, production codec (`encodeSnapshot`, what SnapshotStore writes in ≤ 1 MiB chunks) against the old",
    "full-gzip format (`compress(serializeSnapshot(…))`) on the same parked cell. `maxSnapshotBytes` is checked against `rawSnapshotBytes`",
    "(VM memory + 256) + state JSON, in both formats. Changed pages: 4 KiB pages of the VM memory that differ from the pristine image",
    `(counted by the bench; what \`encodeSnapshot\` keeps). Medians of ${z.reps} cells per row; each resumed cell is checked (it returns its data's size).`,
    "",
    ...table(
      [
        "parked cell",
        "VM memory (KiB)",
        "changed pages (of total)",
        "stored, production (KiB)",
        "**baseline**: stored, old full gzip (KiB)",
        "production / baseline",
      ],
      cells.map(([key, c]) => [
        names[key] ?? key,
        kib(c.memoryBytes),
        `${c.changedPages.median} of ${c.pages}`,
        kib(c.storedBytes.median),
        kib(c.fullStoredBytes.median),
        `${(c.storedBytes.median / c.fullStoredBytes.median).toFixed(3)}× (${ratio(c.fullStoredBytes.median, c.storedBytes.median)} smaller)`,
      ]),
    ),
    "",
    `Park / resume of the same cells, one at a time, medians of ${z.reps} (1 ms clock):`,
    "",
    ...table(
      [
        "parked cell",
        "park, production (ms)",
        "**baseline**: park, old format (ms)",
        "resume, production (ms)",
        "**baseline**: resume, old format (ms)",
        "park vs baseline",
        "resume vs baseline",
      ],
      cells.map(([key, c]) => [
        names[key] ?? key,
        ms(c.park.median),
        ms(c.fullPark.median),
        ms(c.resume.median),
        ms(c.fullResume.median),
        faster(c.park.median, c.fullPark.median),
        faster(c.resume.median, c.fullResume.median),
      ]),
    ),
    "",
    `Plus the run state stored beside each snapshot (JSON: pending requests, output budget, TTL): ${z.stateJsonBytes} bytes for these cells.`,
    "Pages the cell never wrote since the pristine image cost nothing; the pages its data lands in are stored XOR-ed against the image",
    "(pages past the image's end as they are) and gzip-compressed, so repeated data compresses away and many small random strings do not",
    "(their object overhead also makes the memory several times the data size).",
    "",
  );
  return L;
}

function reportThroughput(h: SuspendHttpFigures, w: SuspendIsolateFigures): string[] {
  const t = h.throughput;
  const small = w.sizes.cells.small;
  const state = w.sizes.stateJsonBytes;
  const L: string[] = [];
  L.push(`### 4.3 Park/resume throughput: ${t.cells} cells in one session`, "");
  L.push(
    `Over HTTP, a fresh session and turn per repetition (${t.reps}): ${t.cells} × \`exec\` of \`return i\` (baseline), then ${t.cells} cells parked one after`,
    `the other (\`let n = i; await yield_control(); return n + 1;\`), a ${t.cells + 1}th park (refused: the ${t.cells}-slot cap is full, so all ${t.cells} were`,
    `parked at once), then all ${t.cells} resumed one after the other, each checked. Then ${t.cells} parked again and resumed with all waits in flight at`,
    "once (the session object runs cells one at a time). Totals are medians over repetitions; per-cell figures pool all of them; the",
    "ratio is each repetition's total over the baseline's total in the same repetition (median, min–max over repetitions).",
    "",
  );
  const span = (r: Summary) => `${x(r.median)} (${xRange(r.min, r.max)})`;
  L.push(
    ...table(
      ["measure", "total (ms)", "per cell median (ms)", "per cell p90 (ms)", "ratio vs baseline (total)"],
      [
        [`**baseline**: ${t.cells} × \`exec\` that completes`, ms(t.noParkTotal.median), ms(t.noPark.median), ms(t.noPark.p90), "1×"],
        [`${t.cells} parks, sequential`, ms(t.parkTotal.median), ms(t.park.median), ms(t.park.p90), span(t.ratios.park)],
        [`${t.cells} waits, sequential`, ms(t.waitTotal.median), ms(t.wait.median), ms(t.wait.p90), span(t.ratios.wait)],
        [`${t.cells} parks + ${t.cells} waits`, ms(t.bothTotal.median), "—", "—", span(t.ratios.both)],
        [`${t.cells} waits, all in flight at once`, ms(t.concurrentWaitTotal.median), "—", "—", span(t.ratios.concurrentWait)],
      ],
    ),
    "",
  );
  if (small) {
    const stored = (st: WorkerStats) => st.median;
    const peak = t.cells * (stored(small.storedBytes) + state);
    const peakFull = t.cells * (stored(small.fullStoredBytes) + state);
    L.push(
      `Peak stored bytes with all ${t.cells} parked: ≈ ${kib(peak)} KiB (${t.cells} × (${kib(stored(small.storedBytes))} KiB snapshot + ${state} B state), from the production`,
      `codec sizes in 4.2; the old full-gzip format would store ≈ ${kib(peakFull)} KiB, ${ratio(peakFull, peak)} more. The production worker exposes no storage`,
      "figures and no route was added for this.",
      "",
    );
  }
  return L;
}
