CREATE TABLE "site_chrome_strings" (
	"site_id" uuid NOT NULL,
	"locale" text NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "site_chrome_strings_pk" PRIMARY KEY("site_id","locale","key")
);
--> statement-breakpoint
CREATE TABLE "collections" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"site_id" uuid NOT NULL,
	"key" text NOT NULL,
	"name" text NOT NULL,
	"fields" jsonb NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "collections_site_key_unique" UNIQUE("site_id","key")
);
--> statement-breakpoint
CREATE TABLE "collection_items" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"collection_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"values" jsonb NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "collection_items_position_nonnegative" CHECK ("collection_items"."position" >= 0)
);
--> statement-breakpoint
ALTER TABLE "site_layouts" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "default_locale" text DEFAULT 'en' NOT NULL;--> statement-breakpoint
ALTER TABLE "pages" ADD COLUMN "links" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "site_chrome_strings" ADD CONSTRAINT "site_chrome_strings_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collections" ADD CONSTRAINT "collections_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collection_items" ADD CONSTRAINT "collection_items_collection_id_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "collection_items_collection_position_unique" ON "collection_items" USING btree ("collection_id","position");--> statement-breakpoint
-- Hand-added (decision 0606): pages used to default to position 0, so a site may hold several pages at one
-- position. Renumber each site's pages 0..n-1 in their listed order before the unique index is built.
UPDATE "pages" SET "position" = r.n FROM (SELECT "id", (row_number() OVER (PARTITION BY "site_id" ORDER BY "position", "path") - 1)::int AS n FROM "pages") r WHERE "pages"."id" = r."id" AND "pages"."position" IS DISTINCT FROM r.n;--> statement-breakpoint
CREATE UNIQUE INDEX "pages_site_position_unique" ON "pages" USING btree ("site_id","position");--> statement-breakpoint
ALTER TABLE "pages" ADD CONSTRAINT "pages_position_nonnegative" CHECK ("pages"."position" >= 0);