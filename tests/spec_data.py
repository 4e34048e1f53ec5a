"""The SPEC section 7 users feed and its expected tables, shared by the tests."""

import datetime
import random

USERS_COLUMNS = {
    "userId": "integer",
    "name": "varchar",
    "city": "varchar",
    "operation": "varchar",
    "sequenceNum": "integer",
}

USERS_CDF = [
    (124, "Raul", "Oaxaca", "INSERT", 1),
    (123, "Isabel", "Monterrey", "INSERT", 1),
    (125, "Mercedes", "Tijuana", "INSERT", 2),
    (126, "Lily", "Cancun", "INSERT", 2),
    (123, None, None, "DELETE", 6),
    (125, "Mercedes", "Guadalajara", "UPDATE", 6),
    (125, "Mercedes", "Mexicali", "UPDATE", 5),
    (123, "Isabel", "Chihuahua", "UPDATE", 5),
]

TRUNCATE_AT_3 = (None, None, None, "TRUNCATE", 3)

USERS_CONFIG = {
    "keys": ["userId"],
    "sequence_by": "sequenceNum",
    "apply_as_deletes": "operation = 'DELETE'",
    "apply_as_truncates": "operation = 'TRUNCATE'",
    "except_column_list": ["operation", "sequenceNum"],
}
USERS_SCD2_CONFIG = {**{k: v for k, v in USERS_CONFIG.items() if k != "apply_as_truncates"}, "stored_as_scd_type": 2}
# scenarios.run_batches(project, *batches, **USERS_RUN): the users feed into the model `users`.
USERS_RUN = {"model": "users", "table": "users_cdf"}

SPEC_7_1 = [(124, "Raul", "Oaxaca"), (125, "Mercedes", "Guadalajara"), (126, "Lily", "Cancun")]
SPEC_7_2 = [(125, "Mercedes", "Guadalajara")]

FEED_MODEL = "select * from {{ target.schema }}.users_cdf"

SPEC_7_3 = [
    (123, "Isabel", "Monterrey", 1, 5),
    (123, "Isabel", "Chihuahua", 5, 6),
    (124, "Raul", "Oaxaca", 1, None),
    (125, "Mercedes", "Tijuana", 2, 5),
    (125, "Mercedes", "Mexicali", 5, 6),
    (125, "Mercedes", "Guadalajara", 6, None),
    (126, "Lily", "Cancun", 2, None),
]
SPEC_7_4 = [
    (123, "Isabel", "Chihuahua", 1, 6),
    (124, "Raul", "Oaxaca", 1, None),
    (125, "Mercedes", "Guadalajara", 2, None),
    (126, "Lily", "Cancun", 2, None),
]


def shuffled_split(events: list[tuple], seed: int, runs: int) -> list[list[tuple]]:
    """The events in a seeded random order, cut into `runs` non-empty batches."""
    rng = random.Random(seed)
    events = events[:]
    rng.shuffle(events)
    cuts = sorted(rng.sample(range(1, len(events)), runs - 1))
    return [events[a:b] for a, b in zip([0, *cuts], [*cuts, len(events)])]


# SPEC 7.6: bitemporal, one company, all on 2025-07-18.
def _t(clock: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(f"2025-07-18 {clock}")


COMPANY_COLUMNS = {
    "CompanyId": "varchar",
    "datapoints": "varchar",
    "bt": "timestamp",
    "st": "timestamp",
    "op": "varchar",
}
COMPANY_CONFIG = {
    "keys": ["CompanyId"],
    "sequence_by": "bt",
    "system_sequence_by": "st",
    "stored_as_scd_type": "bitemporal",
    "apply_as_deletes": "op = 'DELETE'",
    "except_column_list": ["bt", "st", "op"],
}
COMPANY_RUN = {"model": "companies", "table": "events"}
COMPANY_EVENTS = [  # in arrival order
    ("A", "XFv1", _t("10:01:00"), _t("10:05:00"), "UPSERT"),
    ("A", "XFv2", _t("12:15:43"), _t("12:20:00"), "UPSERT"),
    ("A", "XFv3", _t("12:05:00"), _t("12:25:00"), "UPSERT"),  # out of order in business time
    ("A", None, _t("12:30:00"), _t("12:30:00"), "DELETE"),
]
SPEC_7_6 = [
    ("A", "XFv1", _t("10:01:00"), None, _t("10:05:00"), _t("12:20:00")),
    ("A", "XFv1", _t("10:01:00"), _t("12:05:00"), _t("12:25:00"), None),
    ("A", "XFv1", _t("10:01:00"), _t("12:15:43"), _t("12:20:00"), _t("12:25:00")),
    ("A", "XFv2", _t("12:15:43"), None, _t("12:20:00"), _t("12:30:00")),
    ("A", "XFv2", _t("12:15:43"), _t("12:30:00"), _t("12:30:00"), None),
    ("A", "XFv3", _t("12:05:00"), _t("12:15:43"), _t("12:25:00"), None),
]
