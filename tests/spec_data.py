"""The SPEC section 7 users feed and its expected tables, shared by the tests."""

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
