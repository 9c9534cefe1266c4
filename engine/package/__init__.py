"""Operator packages: loading (folder, .tgz, URL), verification, archives, version ranges, `package new`.

The typed model they load into is engine.model.
"""
