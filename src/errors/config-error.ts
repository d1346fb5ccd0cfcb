/** A setting that cannot be used as given (an environment variable, a flag, a key file): said once, at start. */
export class ConfigError extends Error {}
