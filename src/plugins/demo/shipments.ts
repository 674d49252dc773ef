/** Demo data for the seed's shipments example. */
export const SHIPMENTS: ReadonlyArray<{ id: string; paid: boolean; tons: number }> = [
  { id: "SH-1001", paid: true, tons: 12.5 },
  { id: "SH-1002", paid: false, tons: 18 },
  { id: "SH-1003", paid: false, tons: 4.2 },
  { id: "SH-1004", paid: true, tons: 31 },
  { id: "SH-1005", paid: false, tons: 22.75 },
  { id: "SH-1006", paid: false, tons: 9.9 },
];
