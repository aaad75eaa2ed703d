/** Commander's argument parser for a repeatable flag: each use adds its value to the list. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
