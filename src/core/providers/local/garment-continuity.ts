/**
 * Whether the garment at the chest is a dress: one garment whose colours carry on down the body's
 * axis from the chest past the hips, across the waist, with bare legs (or the gap between them)
 * below its hem. A top ends at the waist: bare skin below it (a crop top), or another garment
 * (trousers, a skirt), even one of nearly its colours, which then goes on below where the top's
 * colours stop. A belt, a ribbon or a seam across a dress is passed over.
 */
import { nearest } from './colour-clusters';

/** What the test reads of the person photo, on the working grid. */
export type Body = {
  w: number;
  /** 1 where the figure is (alpha), and where it is skin. */
  fig: Uint8Array;
  skin: Uint8Array;
  /** Wall the cut-out kept beside the figure. */
  wallLike: (i: number) => boolean;
  lab: Float32Array;
  /** The chin's row, about a face's height (`unit`), the body's axis and the figure's last row. */
  chin: number;
  unit: number;
  cx: number;
  bottom: number;
};

/** Lab distance within which a pixel has one of the chest garment's colours. */
const SAME_COLOUR = 16;
/** Share of a band's clothing in the chest garment's colours for the garment to go on. */
const CARRIES_ON = 0.6;
/** Lab distance (lightness weighted 0.6) from the chest's mean colour within which a band's mean
 * colour is the same garment: a sequined dress drifts up to 14 down its length; pale jeans under a
 * white tank are 15-20 away, though many of their pixels pass the colour test. */
const MEAN_JUMP = 16;
/** Share of the axis a garment covers: a bare midriff or the gap between legs shows less. */
const COVERED = 0.7;
/** Below this share of clothing under the axis, a band below the hem is bare legs. */
const LEGS = 0.5;
/** The hips lie about three face heights below the chin; a dress goes past them. */
const HIPS = 3.2;
/** A belt, ribbon or seam of another colour: up to this many face heights are passed over. */
const BREAK = 0.45;

type Band = { clothed: number; same: number; mean: number[] };

export type Reach = {
  /** The last row the chest garment's colours cover under the axis (-1: they never start). */
  row: number;
  /** What is under the axis below it: bare legs, another garment, or the frame's edge. */
  below: 'legs' | 'garment' | 'frame';
};

/** How much of the axis window on rows y..y+band-1 is clothed, and in the garment's colours. */
function bandAt(body: Body, colours: number[][], y: number, band: number): Band {
  const { w, fig, skin, wallLike, lab, cx, unit } = body;
  const x0 = Math.max(0, Math.round(cx - unit * 0.5));
  const x1 = Math.min(w - 1, Math.round(cx + unit * 0.5));
  let clothed = 0;
  let same = 0;
  let all = 0;
  const sum = [0, 0, 0];
  for (let yy = y; yy < y + band; yy++)
    for (let x = x0; x <= x1; x++) {
      const i = yy * w + x;
      all++;
      if (!fig[i] || skin[i] || wallLike(i)) continue;
      clothed++;
      for (let c = 0; c < 3; c++) sum[c]! += lab[i * 3 + c]!;
      if (nearest(lab, i, colours) < SAME_COLOUR) same++;
    }
  return {
    clothed: clothed / all,
    same: clothed ? same / clothed : 0,
    mean: sum.map((v) => v / Math.max(1, clothed)),
  };
}

/** How far down the body's axis the chest garment's colours reach, and what lies below. */
export function garmentReach(body: Body, colours: number[][]): Reach {
  const { chin, unit, bottom } = body;
  const band = Math.max(2, Math.round(unit * 0.2));
  let row = -1;
  let broken = 0;
  let start: number[] | undefined;
  let y = chin + Math.round(unit * 0.6);
  for (; y + band <= bottom; y += band) {
    const b = bandAt(body, colours, y, band);
    if (b.clothed < COVERED) {
      // Skin under the axis: a low neckline above the garment, a bare midriff or legs below it.
      if (row >= 0) break;
      continue;
    }
    start ??= b.mean;
    const jump = Math.hypot(
      (b.mean[0]! - start[0]!) * 0.6,
      b.mean[1]! - start[1]!,
      b.mean[2]! - start[2]!,
    );
    if (b.same >= CARRIES_ON && jump < MEAN_JUMP) {
      row = y + band - 1;
      broken = 0;
    } else if (row >= 0 && (broken += band) > unit * BREAK) break;
  }
  if (row < 0) return { row, below: 'frame' };
  // Under the hem: the bands of the next ~0.6 face heights.
  let clothed = 0;
  let bands = 0;
  for (let yy = row + 1; yy + band <= Math.min(bottom, row + unit * 0.6); yy += band) {
    clothed += bandAt(body, colours, yy, band).clothed;
    bands++;
  }
  if (bands < 2) return { row, below: 'frame' };
  return { row, below: clothed / bands < LEGS ? 'legs' : 'garment' };
}

/** One garment from the chest past the hips, with bare legs below its hem: a dress. */
export function continuesPastHips(body: Body, reach: Reach): boolean {
  return reach.row >= body.chin + body.unit * HIPS && reach.below === 'legs';
}
