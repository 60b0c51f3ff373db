/**
 * Dynamic arrays and the functions the delta refresh's block checksums use (issue #24), each against
 * the examples of Microsoft's own function pages (support.microsoft.com: LET, SEQUENCE, MID, UNICODE,
 * MOD, TEXTJOIN, ISTEXT, ISFORMULA, ROW, COLUMN) and the dynamic-array rules (an operator applies
 * element by element; a dimension of 1 is broadcast).
 */
import { Workbook, createExcelNamespace, inspect } from "../../src/emulator";

async function calc(setup: Array<[string, unknown[][]]>, formula: string): Promise<unknown> {
  const wb = new Workbook({ currentYear: 2025 });
  const Excel = createExcelNamespace(wb);
  await Excel.run(async (context) => {
    const s = context.workbook.worksheets.getItem("Sheet1");
    for (const [addr, values] of setup) s.getRange(addr).values = values as (string | number | boolean)[][];
    s.getRange("Z1").formulas = [[formula]];
    await context.sync();
  });
  return inspect(wb, "Z1").values[0][0];
}

test("LET: names bound once, in order, visible only inside (docs example: =LET(x, 5, SUM(x, 1)) is 6)", async () => {
  expect(await calc([], "=LET(x,5,SUM(x,1))")).toBe(6);
  expect(await calc([], "=LET(ab,2,cd,ab*10,cd+ab)")).toBe(22);
  // A LET without a name/value pair is refused (#NAME? is what a formula Excel cannot parse shows here).
  expect(await calc([], "=LET(5)")).toBe("#NAME?");
  // A reference bound to a name stays a reference.
  expect(await calc([["A1:A3", [[1], [2], [3]]]], "=LET(rg,A1:A3,SUM(rg)+ROWS0)")).toBe("#NAME?");
  expect(await calc([["A1:A3", [[1], [2], [3]]]], "=LET(rg,A1:A3,SUM(rg))")).toBe(6);
});

test("SEQUENCE fills row by row from start by step; an empty size is #CALC! (docs: =SEQUENCE(4,5) is 1…20)", async () => {
  expect(await calc([], "=SUM(SEQUENCE(4,5))")).toBe(210);
  expect(await calc([], "=SUM(SEQUENCE(3,1,10,-2))")).toBe(10 + 8 + 6);
  expect(await calc([], "=SEQUENCE(1)")).toBe(1);
  expect(await calc([], "=SUM(SEQUENCE(0))")).toBe("#CALC!");
  // A final result larger than one cell is not spilled by the emulator (stricter: #VALUE!).
  expect(await calc([], "=SEQUENCE(2)")).toBe("#VALUE!");
});

test("MID over an array of start positions, UNICODE of each character (docs: =UNICODE(\"B\") is 66, =UNICODE(\" \") 32)", async () => {
  expect(await calc([], '=UNICODE("B")')).toBe(66);
  expect(await calc([], '=UNICODE(" ")')).toBe(32);
  expect(await calc([], '=UNICODE("")')).toBe("#VALUE!");
  // docs (MID): =MID("Fluid Flow",1,5) is "Fluid", =MID(…,7,20) "Flow", =MID(…,20,5) "".
  expect(await calc([], '=MID("Fluid Flow",1,5)')).toBe("Fluid");
  expect(await calc([], '=MID("Fluid Flow",7,20)')).toBe("Flow");
  expect(await calc([], '=MID("Fluid Flow",20,5)')).toBe("");
  expect(await calc([], '=MID("Fluid Flow",0,5)')).toBe("#VALUE!");
  // The sum of the character codes of "AB" (65 + 66), through arrays.
  expect(await calc([], '=LET(tx,"AB",SUM(UNICODE(MID(tx,SEQUENCE(LEN(tx)),1))))')).toBe(131);
  // A lone surrogate half (MID splits a character outside the BMP) is #VALUE! (docs: partial surrogates).
  expect(await calc([], '=SUM(UNICODE(MID("\u{2000B}",SEQUENCE(2),1)))')).toBe("#VALUE!");
});

test("MOD has the divisor's sign (docs: =MOD(3,2) 1, =MOD(-3,2) 1, =MOD(3,-2) -1, =MOD(-3,-2) -1); 0 is #DIV/0!", async () => {
  expect(await calc([], "=MOD(3,2)")).toBe(1);
  expect(await calc([], "=MOD(-3,2)")).toBe(1);
  expect(await calc([], "=MOD(3,-2)")).toBe(-1);
  expect(await calc([], "=MOD(-3,-2)")).toBe(-1);
  expect(await calc([], "=MOD(3,0)")).toBe("#DIV/0!");
});

test("TEXTJOIN joins ranges row by row; ignore_empty FALSE keeps empty cells (docs example 2)", async () => {
  const grid = [["a1", "b1"], ["a2", "b2"], ["", ""], ["a4", "b4"]];
  expect(await calc([["A2:B5", grid]], '=TEXTJOIN(", ",TRUE,A2:B5)')).toBe("a1, b1, a2, b2, a4, b4");
  expect(await calc([["A2:B5", grid]], '=TEXTJOIN(", ",FALSE,A2:B5)')).toBe("a1, b1, a2, b2, , , a4, b4");
  // A number is joined as its text, a logical as TRUE/FALSE; an error in the range is the result.
  expect(await calc([["A1:C1", [[12, true, "x"]]]], '=TEXTJOIN("|",FALSE,A1:C1)')).toBe("12|TRUE|x");
  expect(await calc([["A1", [["x"]]]], '=TEXTJOIN("|",FALSE,A1,1/0)')).toBe("#DIV/0!");
  // Over 32,767 characters (the cell limit) is #VALUE!.
  expect(await calc([["A1:B1", [["x".repeat(20000), "y".repeat(20000)]]]], '=TEXTJOIN("",FALSE,A1:B1)')).toBe("#VALUE!");
});

test("ISTEXT / ISFORMULA over a range give one value per cell; ROW and COLUMN of a range are arrays; broadcasting", async () => {
  const setup: Array<[string, unknown[][]]> = [["A1:B2", [["t", 1], [true, "u"]]]];
  expect(await calc(setup, "=SUM(ISTEXT(A1:B2)*1)")).toBe(2);
  // ROW(A1:B2) is {1;2}, COLUMN(A1:B2) {1,2}: their sum broadcasts to {2,3;3,4}.
  expect(await calc(setup, "=SUM(ROW(A1:B2)+COLUMN(A1:B2))")).toBe(12);
  // Weighted by position: text at (1,1) and (2,2).
  expect(await calc(setup, "=SUM(ISTEXT(A1:B2)*(ROW(A1:B2)*10+COLUMN(A1:B2)))")).toBe(11 + 22);
  expect(await calc([], "=ROW()")).toBe(1);
  expect(await calc([], "=COLUMN()")).toBe(26);
  const wb = new Workbook({ currentYear: 2025 });
  const Excel = createExcelNamespace(wb);
  await Excel.run(async (context) => {
    const s = context.workbook.worksheets.getItem("Sheet1");
    s.getRange("A1:A3").formulas = [["1"], ["=1+1"], ["x"]];
    s.getRange("C1").formulas = [["=SUM(ISFORMULA(A1:A3)*ROW(A1:A3))"]];
    s.getRange("C2").formulas = [["=ISFORMULA(A2)"]];
    await context.sync();
  });
  expect(inspect(wb, "C1:C2").values).toEqual([[2], [true]]);
  // Arrays of different sizes: elements beyond the smaller one are #N/A.
  expect(await calc([], "=SUM(SEQUENCE(2)+SEQUENCE(3))")).toBe("#N/A");
});

test("INDEX (reference form) gives the cell at row and column, a reference (docs: =INDEX(A2:B3,2,2) is the value in B3)", async () => {
  const setup: Array<[string, unknown[][]]> = [["A2:B3", [["Apples", "Lemons"], ["Bananas", "Pears"]]]];
  expect(await calc(setup, "=INDEX(A2:B3,2,2)")).toBe("Pears");
  expect(await calc(setup, "=INDEX(A2:B3,2,1)")).toBe("Bananas");
  // One index into a one-column reference is the row; into a one-row reference the column.
  expect(await calc(setup, "=INDEX(A2:A3,2)")).toBe("Bananas");
  expect(await calc(setup, "=INDEX(A2:B2,2)")).toBe("Lemons");
  expect(await calc(setup, "=INDEX(A2:B3,3,1)")).toBe("#REF!");
  // A reference, so an empty cell is seen as blank (not as 0).
  expect(await calc(setup, '=LET(v,INDEX(A2:B5,4,1),IF(ISBLANK(v),"",v))')).toBe("");
});

test("ISLOGICAL, SUBSTITUTE, ROWS, COLUMNS (issue #34; docs examples: SUBSTITUTE(\"Sales Data\",\"Sales\",\"Cost\") is Cost Data, SUBSTITUTE(\"Quarter 1, 2011\",\"1\",\"2\",3) is Quarter 1, 2012; ROWS(C1:E4) is 4, COLUMNS(C1:E4) 3)", async () => {
  expect(await calc([["A1:C1", [[true, 1, "x"]]]], "=SUM(ISLOGICAL(A1:C1)*1)")).toBe(1);
  expect(await calc([], '=SUBSTITUTE("Sales Data","Sales","Cost")')).toBe("Cost Data");
  expect(await calc([], '=SUBSTITUTE("Quarter 1, 2008","1","2",1)')).toBe("Quarter 2, 2008");
  expect(await calc([], '=SUBSTITUTE("Quarter 1, 2011","1","2",3)')).toBe("Quarter 1, 2012");
  expect(await calc([], '=SUBSTITUTE("abc","","x")')).toBe("abc");
  expect(await calc([], "=ROWS(C1:E4)*10+COLUMNS(C1:E4)")).toBe(43);
  expect(await calc([], "=ROWS(SEQUENCE(7,2))*10+COLUMNS(SEQUENCE(7,2))")).toBe(72);
});

test("IF and & over arrays: one result per element, each from its own branch (dynamic arrays)", async () => {
  const setup: Array<[string, unknown[][]]> = [["A1:C1", [[1, "t", 3]]]];
  expect(await calc(setup, '=TEXTJOIN("|",FALSE,IF(ISNUMBER(A1:C1),"n"&A1:C1,"s"&A1:C1))')).toBe("n1|st|n3");
  // An element the other branch would fail on (IF("t") is #VALUE!) is never chosen.
  expect(await calc(setup, '=TEXTJOIN("|",FALSE,IF(ISTEXT(A1:C1),"s",IF(A1:C1,"x","y")))')).toBe("x|s|x");
  expect(await calc(setup, '=TEXTJOIN("|",FALSE,IF(ISTEXT(A1:C1),A1:C1))')).toBe("FALSE|t|FALSE");
});
