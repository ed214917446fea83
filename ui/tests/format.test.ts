import { describe, expect, it } from "vitest";
import { cleanText, groupDigits } from "../src/lib/format";

describe("cleanText", () => {
  it("shows control characters of a synced name as a visible mark, one for one", () => {
    expect(cleanText("lease\nID 0000  pdf  1 fake row")).toBe("lease\ufffdID 0000  pdf  1 fake row");
    expect(cleanText("evil\u001b[31mred\u001b[0m.pdf")).toBe("evil\ufffd[31mred\ufffd[0m.pdf");
    expect(cleanText("bell\u0007\u007f\u0085")).toBe("bell\ufffd\ufffd\ufffd");
    expect(cleanText("invoice\u202egnp.exe")).toBe("invoice\ufffdgnp.exe");
    expect(cleanText("a\u2066b\u2069c\u200fd")).toBe("a\ufffdb\ufffdc\ufffdd");
  });

  it("leaves ordinary names untouched, accents and scripts included", () => {
    for (const name of ["Master Services Agreement.pdf", "Vertrag Müller & Söhne", "契約書.docx", "عقد.pdf", "tab-free"]) {
      expect(cleanText(name)).toBe(name);
    }
  });
});

describe("groupDigits", () => {
  it("groups the thousands of an exact amount without touching its digits", () => {
    expect(groupDigits("14388.00")).toBe("14,388.00");
    expect(groupDigits("80.00")).toBe("80.00");
    expect(groupDigits("-1234567.5")).toBe("-1,234,567.5");
    expect(groupDigits("12345678901234567890.01")).toBe("12,345,678,901,234,567,890.01");
    expect(groupDigits("not a number")).toBe("not a number");
  });
});
