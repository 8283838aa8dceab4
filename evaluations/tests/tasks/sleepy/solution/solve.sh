#!/bin/bash
echo started > /app/started
(sleep 300 &)
sleep 300
