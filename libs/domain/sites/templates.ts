import { pages, sites, templates } from "@site/db";
import { AppError, type Context, isUuid, notFound } from "@site/domain/core";
import { asc, count, eq } from "drizzle-orm";

/** Resolves a gallery slug to its live host site (404, 410 or 422 before any write). */
export async function resolveTemplate(ctx: Context, slug: string): Promise<{ slug: string; siteId: string }> {
  const [tpl] = await ctx.db.select().from(templates).where(eq(templates.slug, slug)).limit(1);
  if (!tpl) throw new AppError("TEMPLATE_NOT_FOUND", `template "${slug}" is not in the gallery`);
  if (tpl.status !== "approved") {
    throw new AppError("TEMPLATE_UNAVAILABLE", `template "${slug}" is no longer approved`);
  }
  const [{ n }] = (await ctx.db.select({ n: count() }).from(pages).where(eq(pages.siteId, tpl.siteId))) as [
    { n: number },
  ];
  if (n === 0) throw new AppError("TEMPLATE_SNAPSHOT_EMPTY", `template "${slug}" has no pages to copy`);
  return { slug: tpl.slug, siteId: tpl.siteId };
}

/** The gallery: approved templates only. */
export async function listTemplates(ctx: Context) {
  const rows = await ctx.db
    .select({
      slug: templates.slug,
      name: templates.name,
      description: templates.description,
      siteId: templates.siteId,
    })
    .from(templates)
    .where(eq(templates.status, "approved"))
    .orderBy(asc(templates.name), asc(templates.slug));
  return rows.map((r) => ({ slug: r.slug, name: r.name, description: r.description }));
}

/** Registers (or updates) a gallery template on a host site; operator CLI. */
export async function upsertTemplate(
  ctx: Context,
  input: {
    slug: string;
    siteId: string;
    name?: string;
    /** Shown in the gallery; at most 500 characters. Omitted on an update: kept. */
    description?: string;
    status?: "approved" | "withdrawn";
  },
) {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(input.slug))
    throw new AppError("VALIDATION_ERROR", "slug: invalid template slug");
  if (input.description !== undefined && input.description.length > 500)
    throw new AppError("VALIDATION_ERROR", "description: at most 500 characters");
  if (!isUuid(input.siteId)) throw notFound("site");
  const [site] = await ctx.db
    .select({ id: sites.id, name: sites.name })
    .from(sites)
    .where(eq(sites.id, input.siteId));
  if (!site) throw notFound("site");
  const status = input.status ?? "approved";
  const values = {
    slug: input.slug,
    siteId: site.id,
    name: input.name ?? site.name,
    description: input.description ?? "",
    status,
  };
  const [row] = await ctx.db
    .insert(templates)
    .values(values)
    .onConflictDoUpdate({
      target: templates.slug,
      set: {
        siteId: site.id,
        status,
        ...(input.name ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
      },
    })
    .returning({ slug: templates.slug, siteId: templates.siteId, status: templates.status });
  return row!;
}
