export { FREE_SPACE, QuotaExceeded, quotaExceeded } from "./quota-exceeded";
export { Reservation, Reservations } from "./reservations";
