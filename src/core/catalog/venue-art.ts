/**
 * Venue backdrops as SVG: studio seamless sweeps, walls, streets, landscapes and interiors. The
 * catalog build renders them once; the local provider uses the rendered files as backgrounds.
 */
export type VenueLook =
  | { kind: 'seamless'; top: string; bottom: string }
  | { kind: 'brick'; wall: string; mortar: string; ground: string }
  | { kind: 'city'; sky: string; buildings: string[]; ground: string }
  | { kind: 'plaster'; wall: string; ground: string }
  | { kind: 'graffiti'; wall: string; colors: string[]; ground: string }
  | { kind: 'landscape'; sky: string; far: string; ground: string }
  | { kind: 'garden'; sky: string; leaves: string[]; ground: string }
  | { kind: 'interior'; wall: string; floor: string; window: string }
  | { kind: 'pool'; sky: string; water: string; deck: string };

/** Small deterministic generator so every build draws the same bricks and leaves. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 16807) % 2147483647) / 2147483647;
}

export function venueSvg(look: VenueLook, w: number, h: number): string {
  const horizon = h * 0.72;
  const grad = (id: string, a: string, b: string) =>
    `<linearGradient id="${id}" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="${a}"/><stop offset="1" stop-color="${b}"/></linearGradient>`;
  const vignette = `<radialGradient id="vig" cx="0.5" cy="0.45" r="0.75"><stop offset="0.6" stop-color="#000" stop-opacity="0"/><stop offset="1" stop-color="#000" stop-opacity="0.18"/></radialGradient>`;
  const ground = (color: string) =>
    `<rect y="${horizon}" width="${w}" height="${h - horizon}" fill="${color}"/><rect y="${horizon}" width="${w}" height="${h * 0.02}" fill="#000" opacity="0.08"/>`;
  const rnd = seeded(w * 31 + h + look.kind.length * 977);
  let body = '';
  switch (look.kind) {
    case 'seamless':
      body = `<defs>${grad('g', look.top, look.bottom)}${vignette}</defs><rect width="100%" height="100%" fill="url(#g)"/><ellipse cx="${w / 2}" cy="${h * 0.93}" rx="${w * 0.5}" ry="${h * 0.08}" fill="#fff" opacity="0.12"/>`;
      break;
    case 'brick': {
      const bw = w / 9;
      const bh = h / 26;
      let bricks = '';
      for (let row = 0; row * bh < horizon; row++) {
        for (let col = -1; col * bw < w; col++) {
          const x = col * bw + (row % 2 ? bw / 2 : 0);
          const shade = 0.85 + rnd() * 0.3;
          bricks += `<rect x="${x + 2}" y="${row * bh + 2}" width="${bw - 4}" height="${bh - 4}" fill="${look.wall}" opacity="${shade.toFixed(2)}"/>`;
        }
      }
      body = `<defs>${vignette}</defs><rect width="100%" height="100%" fill="${look.mortar}"/>${bricks}${ground(look.ground)}`;
      break;
    }
    case 'city': {
      let blocks = '';
      let x = -20;
      let i = 0;
      while (x < w) {
        const bw = w * (0.12 + rnd() * 0.12);
        const bh = horizon * (0.35 + rnd() * 0.55);
        const color = look.buildings[i++ % look.buildings.length]!;
        blocks += `<rect x="${x}" y="${horizon - bh}" width="${bw}" height="${bh}" fill="${color}"/>`;
        for (let wy = horizon - bh + 12; wy < horizon - 16; wy += 22) {
          for (let wx = x + 8; wx < x + bw - 12; wx += 18)
            blocks += `<rect x="${wx}" y="${wy}" width="8" height="12" fill="#f4e9b5" opacity="${(0.25 + rnd() * 0.5).toFixed(2)}"/>`;
        }
        x += bw + 4;
      }
      body = `<defs>${grad('g', look.sky, '#ffffff')}${vignette}</defs><rect width="100%" height="100%" fill="url(#g)"/>${blocks}${ground(look.ground)}`;
      break;
    }
    case 'plaster': {
      let stains = '';
      for (let i = 0; i < 40; i++)
        stains += `<circle cx="${rnd() * w}" cy="${rnd() * horizon}" r="${10 + rnd() * 60}" fill="#000" opacity="${(rnd() * 0.05).toFixed(3)}"/>`;
      body = `<defs>${vignette}</defs><rect width="100%" height="100%" fill="${look.wall}"/>${stains}${ground(look.ground)}`;
      break;
    }
    case 'graffiti': {
      let tags = '';
      for (let i = 0; i < 14; i++) {
        const c = look.colors[i % look.colors.length]!;
        tags += `<path d="M ${rnd() * w} ${rnd() * horizon} q ${rnd() * 160 - 80} ${rnd() * 120 - 60} ${rnd() * 200 - 100} ${rnd() * 80 - 40}" stroke="${c}" stroke-width="${12 + rnd() * 20}" fill="none" stroke-linecap="round" opacity="0.85"/>`;
      }
      body = `<defs>${vignette}</defs><rect width="100%" height="100%" fill="${look.wall}"/>${tags}${ground(look.ground)}`;
      break;
    }
    case 'landscape':
      body = `<defs>${grad('g', look.sky, '#ffffff')}${grad('f', look.ground, look.ground)}${vignette}</defs><rect width="100%" height="100%" fill="url(#g)"/><path d="M 0 ${horizon - h * 0.06} Q ${w * 0.3} ${horizon - h * 0.14} ${w * 0.6} ${horizon - h * 0.05} T ${w} ${horizon - h * 0.08} L ${w} ${horizon} L 0 ${horizon} Z" fill="${look.far}"/>${ground(look.ground)}`;
      break;
    case 'garden': {
      let leaves = '';
      for (let i = 0; i < 60; i++) {
        const c = look.leaves[i % look.leaves.length]!;
        leaves += `<ellipse cx="${rnd() * w}" cy="${horizon - rnd() * horizon * 0.55}" rx="${20 + rnd() * 50}" ry="${14 + rnd() * 30}" fill="${c}" opacity="0.9"/>`;
      }
      body = `<defs>${grad('g', look.sky, '#ffffff')}${vignette}</defs><rect width="100%" height="100%" fill="url(#g)"/>${leaves}${ground(look.ground)}`;
      break;
    }
    case 'interior':
      body = `<defs>${vignette}</defs><rect width="100%" height="100%" fill="${look.wall}"/><rect x="${w * 0.62}" y="${h * 0.12}" width="${w * 0.26}" height="${h * 0.45}" fill="${look.window}" stroke="#ffffff" stroke-width="8"/><line x1="${w * 0.75}" y1="${h * 0.12}" x2="${w * 0.75}" y2="${h * 0.57}" stroke="#fff" stroke-width="6"/><rect y="${horizon}" width="${w}" height="${h - horizon}" fill="${look.floor}"/>${Array.from({ length: 8 }, (_, i) => `<line x1="${(i * w) / 8}" y1="${horizon}" x2="${(i * w) / 8 - w * 0.1}" y2="${h}" stroke="#000" opacity="0.08" stroke-width="3"/>`).join('')}`;
      break;
    case 'pool':
      body = `<defs>${grad('g', look.sky, '#ffffff')}${grad('wtr', look.water, '#1f7fa3')}${vignette}</defs><rect width="100%" height="100%" fill="url(#g)"/><rect y="${h * 0.5}" width="${w}" height="${h * 0.22}" fill="url(#wtr)"/>${ground(look.deck)}`;
      break;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}<rect width="100%" height="100%" fill="url(#vig)"/></svg>`;
}
