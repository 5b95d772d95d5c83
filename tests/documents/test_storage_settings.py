"""Where policy PDFs are stored: local disk by default, an S3-compatible store when configured."""

from __future__ import annotations

from insurehub.settings.base import default_file_storage


def test_local_disk_by_default():
    assert default_file_storage({}) == {"BACKEND": "django.core.files.storage.FileSystemStorage"}


def test_s3_compatible_store_when_a_bucket_is_set():
    """The bucket and endpoint come from the environment; objects are private, never overwritten."""
    from storages.backends.s3 import S3Storage

    config = default_file_storage(
        {
            "DOCUMENT_STORAGE_BUCKET": "policeler",
            "DOCUMENT_STORAGE_PREFIX": "/insurehub/",
            "AWS_S3_ENDPOINT_URL": "http://127.0.0.1:9000",
            "AWS_S3_REGION_NAME": "eu-central-1",
            "AWS_ACCESS_KEY_ID": "minio",
            "AWS_SECRET_ACCESS_KEY": "minio-secret",
            "AWS_S3_ADDRESSING_STYLE": "path",
        }
    )
    assert config["BACKEND"] == "storages.backends.s3.S3Storage"
    storage = S3Storage(**config["OPTIONS"])  # builds its settings; no call is made
    assert storage.bucket_name == "policeler" and storage.location == "insurehub"
    assert storage.endpoint_url == "http://127.0.0.1:9000" and storage.addressing_style == "path"
    assert storage.file_overwrite is False and storage.default_acl == "private"
    assert storage.querystring_auth is True


def test_s3_credentials_fall_to_boto3_when_unset():
    options = default_file_storage({"DOCUMENT_STORAGE_BUCKET": "policeler"})["OPTIONS"]
    assert "access_key" not in options and "secret_key" not in options and "endpoint_url" not in options
