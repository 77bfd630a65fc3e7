#!/bin/bash
python3 train.py
