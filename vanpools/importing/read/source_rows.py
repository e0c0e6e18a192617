"""One source row through the mapping into roster cells (the map stage, row by row)."""

import json
from collections.abc import Mapping

from vanpools.importing.columns import COLUMNS, accepted_names
from vanpools.importing.mapping.recipes import map_row
from vanpools.importing.mapping.spec import RIDERS, KindMapping
from vanpools.importing.read.context import Reading
from vanpools.importing.result import RowError
from vanpools.importing.rows import Row, is_blank

LAT_KEYS, LNG_KEYS = ("lat", "latitude"), ("lng", "lon", "long", "longitude")


def mapped_row(
    kind: str, spec: KindMapping, row: Mapping[str, object], where: str, read: Reading
) -> Row:
    mapped = map_row(spec, kind, row, accepted_names(kind))
    parsed = Row(where, {}, sources=mapped.sources)
    for column, message in mapped.problems:
        read.error(where, parsed.column(column), message)
        parsed.failed.add(column)
    cells = flat_coordinates(kind, mapped.cells, where, read.errors)
    parsed.riders = cells.pop(RIDERS, None)
    parsed.cells = {k: v for k, v in cells.items() if k in COLUMNS[kind] and not is_blank(v)}
    return parsed


def flat_coordinates(
    kind: str, row: Mapping[str, object], where: str, errors: list[RowError]
) -> dict[str, object]:
    """``"pickup": {"lat": 37.5, "lng": -122.0}`` → ``pickup_lat``, ``pickup_lng``.

    Other tools keep a point as one object; the columns are a pair. Only a
    key whose ``_lat``/``_lng`` pair exists is read so; anything else in the
    object is an error that shows the expected shape.
    """
    flat: dict[str, object] = {}
    for key, value in row.items():
        name = str(key)
        if not (isinstance(value, dict) and f"{name}_lat" in COLUMNS[kind]):
            flat[key] = value
            continue
        given = {str(k).lower(): v for k, v in value.items()}
        lat = next((given[k] for k in LAT_KEYS if k in given), None)
        lng = next((given[k] for k in LNG_KEYS if k in given), None)
        unknown = sorted(set(given) - set(LAT_KEYS) - set(LNG_KEYS))
        if unknown or lat is None or lng is None:
            found = json.dumps(value)[:80]
            expected = f'{{"lat": 37.59, "lng": -122.02}} (or {name}_lat and {name}_lng columns)'
            errors.append(RowError(where, name, f"found {found}; expected {expected}"))
            continue
        flat[f"{name}_lat"], flat[f"{name}_lng"] = lat, lng
    return flat
