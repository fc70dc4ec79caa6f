/**
 * WebP files from an encoder that is not ours (Chromium's canvas.toDataURL, i.e. libwebp), one per form
 * the size parser reads: simple lossy (`VP8 `), simple lossless (`VP8L`), extended (`VP8X`, with an ICC
 * profile and alpha). The simple ones are Chromium's image chunk alone in a RIFF container (Chromium
 * always writes VP8X because of its ICC profile); Skia decodes all three at the sizes named here.
 */
export const FOREIGN_WEBP = {
  lossy: {
    width: 301,
    height: 203,
    base64:
      "UklGRoIBAABXRUJQVlA4IHYBAAAwGACdASotAcsAPm02mEkkIyKhI3CoAIANiWdu4XYA/oAH4ALMA/TPfAOAA3FXV3QBEYPt" +
      "k6DZkRoNmRGg2AhN9TJ0+/M9ejCrfd6aOw5n35MC+S3MuKqKUecprvMnLi4qopR5ylFStv/zVwkDsQNVESiuuaRaS6u5Q8ak" +
      "niBxPX5e3jDeFKPOXGwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbmwbm" +
      "wbmwbloAAP79OuShId/1XDzts92O88DkPsKPkus4J+RX/5cYdDbL/5ILPxLf1TI5Jo0sQEnuPHs1Ksq9Eaf9nWH+L9RBb/Sp" +
      "65zn/C/f7GW/VzuGZSRvZPUT4YYHmddY9cgqTDF8hzoKlGqfmd3tTXiZg51x2wj/kT3/45pQH/+Wsu8JY6qdMAVgCsAVi/XH" +
      "EvVLsCdlNN9pw1zdSqCnDXN1KoKYgAAAAAAAAAAAAAAAAA==",
  },
  lossless: {
    width: 299,
    height: 201,
    base64:
      "UklGRlYAAABXRUJQVlA4TEkAAAAvKgEyABdw1V+BQIoZ4vub6c9/4Hpg0LaRpOAZ5mu0u/dG9H8wAAAAAAAAAAAAmL0yVVVV" +
      "VVVVVVVVrVvPr739TNTff88nv/8GAA==",
  },
  extended: {
    width: 303,
    height: 205,
    base64:
      "UklGRooDAABXRUJQVlA4WAoAAAAwAAAALgEAzAAASUNDUMgBAAAAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAA" +
      "AABhY3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" +
      "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAA" +
      "ABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAA" +
      "AAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAA" +
      "AAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAA" +
      "AABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADZBTFBIPQAAAAEn" +
      "QJBt4w83le0G14iIODkoaCSp+QeUEIw0/8p63Yj+T0DpVbfBOKlpxH/471Mg+JrmqvQq/sN/+A//QRMAVlA4IFYBAACwFwCd" +
      "ASovAc0APm02mUkkIyKhI3FIAIANiWdu4XaxEYAH4AP4B+QFwAboBwAHk3ex55UYAHKYpbBZkaqV3S6zI1RI4vAJdwpR5KHv" +
      "lrCMTRQmQnLi4s0o85TYXbsKPJQ9h5y3Wu94UebzePihww5ZGqld0usyNUryfKWV3jDeFKg+tPPMM2Dc2Dc2Dc2Dc2Dc2Dc2" +
      "Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2Dc2DbIAA/uLVQdRMQOvB9HxqMvP0bdH636j/" +
      "9XfiD/+XJycmZN/jjOC/Lmf4NQlzqShSRkw8ZDjPivif7MflSLJcX/9oE5Q/z0ZInMJTW3CHMjcovOb6Lk9Ds0UuIW38VFbv" +
      "D5K15R+m2LGf//Eof+f9OLXss4XiaKICiAkqvLyVZzO/e/4zAGPgXwoAAAAAAAAAAAA=",
  },
} as const;
