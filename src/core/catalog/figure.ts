/**
 * Vector fashion figures: one appearance (skin, hair, base outfit) drawn in any pose from joint
 * angles. The catalog build renders model portraits and pose references with it, and the local
 * provider draws the chosen model in the chosen pose before dressing it with the product.
 */
export type Appearance = {
  skin: string;
  hair: string;
  hairStyle: 'short' | 'long' | 'bun' | 'curly' | 'buzz';
  outfit: string;
  shoes: string;
  build: number; // 0.85 (slim) .. 1.15 (broad)
  height: number; // 0.92 .. 1.06
};

/** Joint angles in degrees; 0 points straight down (arms, legs). Positive swings outward. */
export type PoseJoints = {
  leftArm: number;
  leftElbow: number;
  rightArm: number;
  rightElbow: number;
  leftLeg: number;
  leftKnee: number;
  rightLeg: number;
  rightKnee: number;
  lean: number;
  headTilt: number;
  /** 1 = facing the camera, 0 = profile, -1 = back. */
  facing: number;
};

/** Where clothes and jewellery go, in the figure's own pixel coordinates. */
export type FigureAnchors = {
  torso: { x: number; y: number; width: number; height: number };
  legs: { x: number; y: number; width: number; height: number };
  neck: { x: number; y: number };
  ears: { x: number; y: number }[];
  wrists: { x: number; y: number }[];
  hands: { x: number; y: number }[];
  bbox: { x: number; y: number; width: number; height: number };
};

const rad = (deg: number) => (deg * Math.PI) / 180;
type Pt = { x: number; y: number };
const limb = (from: Pt, length: number, angle: number): Pt => ({
  x: from.x + Math.sin(rad(angle)) * length,
  y: from.y + Math.cos(rad(angle)) * length,
});

/**
 * The figure as SVG elements inside a `width` x `height` box, feet near the bottom. Returns the
 * markup and the anchors where products go.
 */
export function drawFigure(
  look: Appearance,
  pose: PoseJoints,
  width: number,
  height: number,
): { svg: string; anchors: FigureAnchors } {
  const unit = (height / 8.9) * look.height; // head heights, with headroom above
  const cx = width / 2 + Math.sin(rad(pose.lean)) * unit * 0.5;
  const footY = height * 0.965;
  const legLen = unit * 1.95;
  const hipY =
    footY -
    legLen * 2 * Math.cos(rad(Math.max(Math.abs(pose.leftLeg), Math.abs(pose.rightLeg)) * 0.5));
  const shoulderY = hipY - unit * 2.6;
  const headR = unit * 0.45;
  const headC = { x: cx + Math.sin(rad(pose.headTilt)) * headR * 0.4, y: shoulderY - unit * 0.95 };
  const shoulderHalf = unit * 0.82 * look.build * (0.55 + 0.45 * Math.abs(pose.facing));
  const hipHalf = unit * 0.6 * look.build * (0.6 + 0.4 * Math.abs(pose.facing));
  const lShoulder = { x: cx - shoulderHalf, y: shoulderY };
  const rShoulder = { x: cx + shoulderHalf, y: shoulderY };
  const lHip = { x: cx - hipHalf * 0.62, y: hipY };
  const rHip = { x: cx + hipHalf * 0.62, y: hipY };
  const armLen = unit * 1.35;
  const lElbow = limb(lShoulder, armLen, -pose.leftArm);
  const lWrist = limb(lElbow, armLen * 0.95, -(pose.leftArm + pose.leftElbow));
  const rElbow = limb(rShoulder, armLen, pose.rightArm);
  const rWrist = limb(rElbow, armLen * 0.95, pose.rightArm + pose.rightElbow);
  const lKnee = limb(lHip, legLen, -pose.leftLeg);
  const lAnkle = limb(lKnee, legLen, -(pose.leftLeg - pose.leftKnee));
  const rKnee = limb(rHip, legLen, pose.rightLeg);
  const rAnkle = limb(rKnee, legLen, pose.rightLeg - pose.rightKnee);

  const limbW = unit * 0.32 * look.build;
  const legW = unit * 0.42 * look.build;
  const line = (a: Pt, b: Pt, w: number, color: string) =>
    `<line x1="${a.x.toFixed(1)}" y1="${a.y.toFixed(1)}" x2="${b.x.toFixed(1)}" y2="${b.y.toFixed(1)}" stroke="${color}" stroke-width="${w.toFixed(1)}" stroke-linecap="round"/>`;
  const poly = (pts: Pt[], color: string) =>
    `<polygon points="${pts.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')}" fill="${color}" stroke-linejoin="round"/>`;
  const back = pose.facing < 0;
  const hair = hairShape(look, headC, headR, back);

  const parts = [
    // Legs (trousers), then shoes.
    line(lHip, lKnee, legW, look.outfit),
    line(lKnee, lAnkle, legW * 0.85, look.outfit),
    line(rHip, rKnee, legW, look.outfit),
    line(rKnee, rAnkle, legW * 0.85, look.outfit),
    `<ellipse cx="${lAnkle.x.toFixed(1)}" cy="${(lAnkle.y + legW * 0.25).toFixed(1)}" rx="${(legW * 0.75).toFixed(1)}" ry="${(legW * 0.35).toFixed(1)}" fill="${look.shoes}"/>`,
    `<ellipse cx="${rAnkle.x.toFixed(1)}" cy="${(rAnkle.y + legW * 0.25).toFixed(1)}" rx="${(legW * 0.75).toFixed(1)}" ry="${(legW * 0.35).toFixed(1)}" fill="${look.shoes}"/>`,
    // Torso (base top) with hips.
    poly(
      [
        lShoulder,
        rShoulder,
        { x: rHip.x + hipHalf * 0.45, y: hipY + unit * 0.15 },
        { x: lHip.x - hipHalf * 0.45, y: hipY + unit * 0.15 },
      ],
      look.outfit,
    ),
    // Neck and head.
    line(
      { x: cx, y: shoulderY + unit * 0.1 },
      { x: headC.x, y: headC.y + headR * 0.8 },
      unit * 0.3,
      look.skin,
    ),
    hair.behind,
    `<ellipse cx="${headC.x.toFixed(1)}" cy="${headC.y.toFixed(1)}" rx="${(headR * 0.82).toFixed(1)}" ry="${headR.toFixed(1)}" fill="${back ? look.hair : look.skin}"/>`,
    hair.front,
    // Arms over the torso, skin with short sleeves.
    line(lShoulder, lElbow, limbW * 1.15, look.outfit),
    line(rShoulder, rElbow, limbW * 1.15, look.outfit),
    line(lElbow, lWrist, limbW, look.skin),
    line(rElbow, rWrist, limbW, look.skin),
    `<circle cx="${lWrist.x.toFixed(1)}" cy="${lWrist.y.toFixed(1)}" r="${(limbW * 0.62).toFixed(1)}" fill="${look.skin}"/>`,
    `<circle cx="${rWrist.x.toFixed(1)}" cy="${rWrist.y.toFixed(1)}" r="${(limbW * 0.62).toFixed(1)}" fill="${look.skin}"/>`,
  ];
  const xs = [lWrist.x, rWrist.x, lAnkle.x, rAnkle.x, lShoulder.x, rShoulder.x, lElbow.x, rElbow.x];
  const minX = Math.min(...xs) - legW;
  const maxX = Math.max(...xs) + legW;
  const top = headC.y - headR * 1.3;
  return {
    svg: parts.join(''),
    anchors: {
      torso: {
        x: lShoulder.x - limbW * 0.5,
        y: shoulderY - unit * 0.1,
        width: rShoulder.x - lShoulder.x + limbW,
        height: hipY - shoulderY + unit * 0.35,
      },
      legs: {
        x: Math.min(lHip.x, lAnkle.x) - legW * 0.6,
        y: hipY,
        width: Math.max(rHip.x, rAnkle.x) - Math.min(lHip.x, lAnkle.x) + legW * 1.2,
        height: footY - hipY - legW * 0.3,
      },
      neck: { x: cx, y: shoulderY - unit * 0.05 },
      ears: [
        { x: headC.x - headR * 0.8, y: headC.y + headR * 0.15 },
        { x: headC.x + headR * 0.8, y: headC.y + headR * 0.15 },
      ],
      wrists: [lWrist, rWrist],
      hands: [
        limb(lWrist, limbW * 0.8, -(pose.leftArm + pose.leftElbow)),
        limb(rWrist, limbW * 0.8, pose.rightArm + pose.rightElbow),
      ],
      bbox: { x: minX, y: top, width: maxX - minX, height: footY - top },
    },
  };
}

function hairShape(
  look: Appearance,
  c: Pt,
  r: number,
  back: boolean,
): { behind: string; front: string } {
  const e = (cx: number, cy: number, rx: number, ry: number) =>
    `<ellipse cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" rx="${rx.toFixed(1)}" ry="${ry.toFixed(1)}" fill="${look.hair}"/>`;
  switch (look.hairStyle) {
    case 'long':
      return {
        behind: `<path d="M ${c.x - r * 0.95} ${c.y - r * 0.2} Q ${c.x - r * 1.2} ${c.y + r * 2.4} ${c.x - r * 0.4} ${c.y + r * 2.6} L ${c.x + r * 0.4} ${c.y + r * 2.6} Q ${c.x + r * 1.2} ${c.y + r * 2.4} ${c.x + r * 0.95} ${c.y - r * 0.2} Z" fill="${look.hair}"/>`,
        front: back ? '' : e(c.x, c.y - r * 0.72, r * 0.86, r * 0.36),
      };
    case 'bun':
      return {
        behind: e(c.x, c.y - r * 1.05, r * 0.45, r * 0.4),
        front: back ? '' : e(c.x, c.y - r * 0.72, r * 0.84, r * 0.34),
      };
    case 'curly':
      return {
        behind: e(c.x, c.y - r * 0.2, r * 1.25, r * 1.15),
        front: back ? '' : e(c.x, c.y - r * 0.75, r * 0.95, r * 0.36),
      };
    case 'buzz':
      return { behind: '', front: back ? '' : e(c.x, c.y - r * 0.75, r * 0.8, r * 0.3) };
    case 'short':
      return {
        behind: e(c.x, c.y - r * 0.3, r * 0.92, r * 0.85),
        front: back ? '' : e(c.x + r * 0.1, c.y - r * 0.74, r * 0.86, r * 0.34),
      };
  }
}
