/** The tool table lives in shared/ so the studio and the UI validate recipes with the same rules. */
export * from '../shared/tools';
