#!/bin/sh
echo "$(dirname "$0")/bzImage"
