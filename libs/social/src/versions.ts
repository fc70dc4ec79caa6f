/**
 * The platform API versions this service calls and the day each stops being served, so that an operator
 * is warned ahead of a sunset instead of learning it from failed posts (decision 1010).
 */

/**
 * Graph API versions (used by the Instagram Platform at graph.instagram.com) and their "Available until"
 * dates, from Meta's version table (https://developers.facebook.com/docs/graph-api/changelog/versions/,
 * read 2026-11). v26.0 had no published date yet ("TBD"): null.
 */
export const GRAPH_VERSION_SUNSETS: Record<string, string | null> = {
  "v20.0": "2026-09-24",
  "v21.0": "2027-01-21",
  "v22.0": "2027-05-20",
  "v23.0": "2027-10-08",
  "v24.0": "2028-02-18",
  "v25.0": "2028-07-29",
  "v26.0": null,
};

/** The default Graph API version: the newest with a published sunset (v25.0, served until 2028-07-29). */
export const GRAPH_DEFAULT_VERSION = "v25.0";
/** The Threads API's only version (https://developers.facebook.com/docs/threads/overview). */
export const THREADS_DEFAULT_VERSION = "v1.0";
/** How long before a sunset the warning starts. */
export const SUNSET_WARNING_DAYS = 90;

/** When a LinkedIn-Version (YYYYMM) stops being served: at least a year after its month (versioning page). */
export function linkedinSunset(version: string): Date | null {
  const m = /^(\d{4})(\d{2})/.exec(version);
  return m ? new Date(Date.UTC(Number(m[1]) + 1, Number(m[2]) - 1, 1)) : null;
}

/** A warning about an API version: its name, the setting that moves it, and when it goes. */
export type VersionWarning = { setting: string; version: string; sunset: string | null; message: string };

/**
 * The warnings due at `now`: a version past its sunset, within SUNSET_WARNING_DAYS of it, or unknown to
 * the table above (its sunset cannot be told).
 */
export function apiVersionWarnings(
  versions: { graphVersion?: string; linkedinVersion?: string },
  now: Date,
): VersionWarning[] {
  const out: VersionWarning[] = [];
  const check = (setting: string, version: string, sunset: Date | null | undefined) => {
    if (sunset === undefined) {
      out.push({
        setting,
        version,
        sunset: null,
        message: `${setting}=${version} is not a version this release knows; its sunset date cannot be checked`,
      });
      return;
    }
    if (sunset === null) return;
    const days = Math.floor((sunset.getTime() - now.getTime()) / 86_400_000);
    const day = sunset.toISOString().slice(0, 10);
    if (days < 0)
      out.push({ setting, version, sunset: day, message: `${setting}=${version} was sunset on ${day}` });
    else if (days <= SUNSET_WARNING_DAYS)
      out.push({
        setting,
        version,
        sunset: day,
        message: `${setting}=${version} is served until ${day} (${days} days): move to a newer version`,
      });
  };
  if (versions.graphVersion) {
    const known = GRAPH_VERSION_SUNSETS[versions.graphVersion];
    check(
      "SOCIAL_GRAPH_VERSION",
      versions.graphVersion,
      known === undefined ? undefined : known === null ? null : new Date(`${known}T00:00:00Z`),
    );
  }
  if (versions.linkedinVersion)
    check("LINKEDIN_API_VERSION", versions.linkedinVersion, linkedinSunset(versions.linkedinVersion));
  return out;
}

/** Instagram API with Instagram Login's host (Instagram Login tokens are served here only). */
export const INSTAGRAM_API_HOST = "https://graph.instagram.com";
/** The Threads API's host. */
export const THREADS_API_HOST = "https://graph.threads.net";

/**
 * The versioned base of the Graph platforms: `SOCIAL_API_BASE_<PLATFORM>` (a host, default the one the
 * login type serves) followed by the version (SOCIAL_GRAPH_VERSION, SOCIAL_THREADS_VERSION).
 * Instagram Login tokens are served at graph.instagram.com, not graph.facebook.com
 * (https://developers.facebook.com/docs/instagram-platform/overview#instagram-api-with-instagram-login).
 */
export function graphBase(
  config: {
    socialApiBase: Record<string, string | null>;
    social?: { graphVersion?: string; threadsVersion?: string };
  },
  platform: "instagram" | "threads",
): string {
  const host =
    config.socialApiBase[platform] ?? (platform === "instagram" ? INSTAGRAM_API_HOST : THREADS_API_HOST);
  const version =
    platform === "instagram"
      ? (config.social?.graphVersion ?? GRAPH_DEFAULT_VERSION)
      : (config.social?.threadsVersion ?? THREADS_DEFAULT_VERSION);
  return `${host.replace(/\/$/, "")}/${version}`;
}
